/**
 * The clone's lock (src/source/clone-lock.ts) against real processes: a lock its holder left
 * when it ended is taken at once; a running holder's is waited for, and taken when it ends; the
 * work of one process's sources runs one at a time.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withCloneLock } from "../../src/source/clone-lock.js";

const leaveLock = async (clone: string, pid: number): Promise<void> => {
  await mkdir(`${clone}.lock`, { recursive: true });
  await writeFile(path.join(`${clone}.lock`, "owner"), `${pid}\n${hostname()}\nleft\n`);
};

describe("the clone's lock", () => {
  it("takes a lock whose holder ended, at once", async () => {
    const clone = path.join(await mkdtemp(path.join(tmpdir(), "gatesync-lock-")), "clone");
    const ended = spawnSync(process.execPath, ["-e", "0"]).pid;
    await leaveLock(clone, ended);
    const t0 = Date.now();
    expect(await withCloneLock(clone, { staleAfterMs: 60_000 }, () => Promise.resolve("ran"))).toBe("ran");
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it("waits for a running holder, and goes on once it ends", async () => {
    const clone = path.join(await mkdtemp(path.join(tmpdir(), "gatesync-lock-")), "clone");
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 1500)"]);
    await leaveLock(clone, holder.pid!);
    const t0 = Date.now();
    const ended = new Promise<number>((resolve) => holder.on("exit", () => resolve(Date.now())));
    await withCloneLock(clone, { staleAfterMs: 60_000 }, () => Promise.resolve());
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
    expect(Date.now()).toBeGreaterThanOrEqual(await ended);
  });

  it("runs one process's works on one clone one at a time", async () => {
    const clone = path.join(await mkdtemp(path.join(tmpdir(), "gatesync-lock-")), "clone");
    let inside = 0;
    let most = 0;
    const work = async (): Promise<void> => {
      most = Math.max(most, ++inside);
      await new Promise((r) => setTimeout(r, 20));
      inside--;
    };
    await Promise.all(Array.from({ length: 5 }, async () => withCloneLock(clone, { staleAfterMs: 60_000 }, work)));
    expect(most).toBe(1);
  });
});
