/**
 * A lock's holder as a row or an owner file names it is data another process wrote (or a
 * garbled volume kept): a pid that names no single process — 0 and -1 are the process group and
 * every process to `kill(pid, 0)`, which then answers "alive" — is no holder alive, for the
 * SQLite writer lock as for a clone's lock (process-alive.ts, the one check of both).
 */
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { processAlive } from "../../src/process-alive.js";
import { takeable } from "../../src/record/sqlite/sqlite-lock.js";

describe("a lock holder's pid", () => {
  it("names a live process only when it is one process that runs", () => {
    expect(processAlive(process.pid)).toBe(true);
    for (const pid of [0, -1, -process.pid, Number.NaN, 1.5, Number.POSITIVE_INFINITY]) expect(processAlive(pid)).toBe(false);
  });

  it("of 0 or below in the SQLite lock's row, on this host, lets the lock be taken at once", () => {
    const now = Date.now();
    const row = { token: "t", holder: "garbled", host: hostname(), since: new Date(now).toISOString(), heartbeat: now };
    for (const pid of [0, -1]) expect(takeable({ ...row, pid }, { staleMs: 60_000 }, now)).toBe(true);
    // a live holder with a fresh heartbeat keeps it
    expect(takeable({ ...row, pid: process.ppid }, { staleMs: 60_000 }, now)).toBe(false);
  });
});
