/**
 * The writer lock of a SQLite state: one row of the `lock` table. Taking it, refreshing it and
 * taking over a stale one are each a single compare-and-set UPDATE on the holder's token and
 * heartbeat as they were read, so no interleaving of two processes gives both the lock: the
 * loser's UPDATE matches no row. Every write checks the token inside its own transaction
 * (assertHolder), so a process that lost the lock can no longer write.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type Database from "better-sqlite3";
import { ErrorCode, StateError } from "../../errors.js";
import { processAlive } from "../../process-alive.js";
import { statement } from "./statements.js";

export interface LockRow {
  readonly token: string | null;
  readonly holder: string | null;
  readonly pid: number | null;
  readonly host: string | null;
  readonly since: string | null;
  readonly heartbeat: number | null;
}

export interface LockTiming {
  /** A lock whose heartbeat is older than this is taken over (ms). */
  readonly staleMs: number;
}

export function readLockRow(db: Database.Database): LockRow {
  return (
    (statement(db, "SELECT token, holder, pid, host, since, heartbeat FROM lock WHERE id = 1").get() as LockRow | undefined) ?? {
      token: null,
      holder: null,
      pid: null,
      host: null,
      since: null,
      heartbeat: null,
    }
  );
}

export function describeHolder(row: LockRow): string {
  return `${row.holder ?? "an unknown owner"} (pid ${row.pid ?? "?"} on ${row.host ?? "?"}, since ${row.since ?? "?"})`;
}

/** Whether the lock as read may be taken: free, not refreshed for staleMs, or its process gone (same host). */
export function takeable(row: LockRow, timing: LockTiming, now: number): boolean {
  if (row.token === null) return true;
  if (row.heartbeat === null || now - row.heartbeat > timing.staleMs) return true;
  return row.host === hostname() && typeof row.pid === "number" && row.pid !== process.pid && !processAlive(row.pid);
}

/**
 * Test hook (honoured only with NODE_ENV=test): between its check and its take, the process
 * writes `checked-PID` into the directory GATESYNC_TEST_LOCK_PAUSE names and waits for a file
 * `go` there, so a test can interleave two processes exactly.
 */
async function testPause(env: NodeJS.ProcessEnv): Promise<void> {
  const dir = env.GATESYNC_TEST_LOCK_PAUSE;
  if (env.NODE_ENV !== "test" || dir === undefined || dir === "") return;
  await writeFile(path.join(dir, `checked-${process.pid}`), "");
  const until = Date.now() + 60_000;
  while (!existsSync(path.join(dir, "go")) && Date.now() < until) await sleep(10);
}

function lockedError(row: LockRow, description: string): StateError {
  return new StateError(ErrorCode.STATE_LOCKED, `the state (${description}) is locked by ${describeHolder(row)}`, {
    hint: "wait for that run to finish; a lock whose process is gone is taken over at once on the same host, and after a minute without a heartbeat from another host",
  });
}

/** Takes the lock for `owner`; returns its token, or throws STATE_LOCKED naming the holder. */
export async function takeLock(db: Database.Database, owner: string, timing: LockTiming, description: string): Promise<string> {
  const seen = readLockRow(db);
  if (!takeable(seen, timing, Date.now())) throw lockedError(seen, description);
  await testPause(process.env);
  const token = randomUUID();
  const took = statement(
    db,
    `UPDATE lock SET token = @token, holder = @owner, pid = @pid, host = @host, since = @since, heartbeat = @now
       WHERE id = 1 AND token IS @seenToken AND heartbeat IS @seenHeartbeat`,
  ).run({
    token,
    owner,
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    now: Date.now(),
    seenToken: seen.token,
    seenHeartbeat: seen.heartbeat,
  });
  // someone took (or refreshed) it between our check and our take
  if (took.changes !== 1) throw lockedError(readLockRow(db), description);
  return token;
}

/** Refreshes the heartbeat; false when the lock is no longer ours. */
export function refreshLock(db: Database.Database, token: string): boolean {
  return statement(db, "UPDATE lock SET heartbeat = @now WHERE id = 1 AND token = @token").run({ now: Date.now(), token }).changes === 1;
}

export function releaseLock(db: Database.Database, token: string): void {
  statement(db, "UPDATE lock SET token = NULL, holder = NULL, pid = NULL, host = NULL, since = NULL, heartbeat = NULL WHERE id = 1 AND token = @token").run({
    token,
  });
}

/** The error of a process that lost the lock it held. */
export function lockLostError(row: LockRow, description: string): StateError {
  return new StateError(
    ErrorCode.STATE_LOCK_LOST,
    `this process no longer holds the state lock (${description}); ${row.token === null ? "nobody holds it" : `it is held by ${describeHolder(row)}`}`,
    {
      hint: "its heartbeat stopped for longer than the stale time (a paused or overloaded process) and another run took the lock; nothing more was sent or written by this one: run again once that run is done",
    },
  );
}

/**
 * The fence before a call: throws STATE_LOCK_LOST unless `token` still holds the lock. A
 * holder whose own heartbeat has gone stale (it was paused) but whose lock nobody took yet
 * renews it first — a compare-and-set on its token — so no other process can take it between
 * this check and the call.
 */
export function fenceLock(db: Database.Database, token: string, timing: LockTiming, description: string): void {
  const row = readLockRow(db);
  if (row.token !== token) throw lockLostError(row, description);
  if (row.heartbeat === null || Date.now() - row.heartbeat > timing.staleMs / 2) {
    if (!refreshLock(db, token)) throw lockLostError(readLockRow(db), description);
  }
}

/** Inside a write transaction: throws unless `token` still holds the lock. */
export function assertHolder(db: Database.Database, token: string, description: string): void {
  const row = readLockRow(db);
  if (row.token !== token) throw lockLostError(row, description);
}
