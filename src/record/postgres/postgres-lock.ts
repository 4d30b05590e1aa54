/**
 * The writer's lock of a PostgreSQL state: a session advisory lock, taken on a connection the
 * state then holds until it gives the lock back (postgres-backend.ts), the holder written into
 * the meta row for the others' messages.
 */
import { hostname } from "node:os";
import type pg from "pg";
import { ErrorCode, StateError } from "../../errors.js";
import { lockKeys } from "./postgres-schema.js";

/** Takes the lock on `client` for `owner`, or throws STATE_LOCKED naming its holder. */
export async function takeAdvisoryLock(
  client: pg.PoolClient,
  at: { readonly schema: string; readonly s: string; readonly description: string },
  owner: string,
): Promise<void> {
  const got = (await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok", [at.schema, lockKeys.state])).rows[0]?.ok === true;
  if (!got) {
    const holder = (await client.query<{ lock_owner: string | null; lock_since: Date | null }>(`SELECT lock_owner, lock_since FROM ${at.s}.meta WHERE id = 1`))
      .rows[0];
    throw new StateError(
      ErrorCode.STATE_LOCKED,
      `the state (${at.description}) is locked by ${holder?.lock_owner ?? "another process"}${holder?.lock_since == null ? "" : ` since ${holder.lock_since.toISOString()}`}`,
      {
        hint: "wait for that run to finish; the lock goes when its database connection does",
      },
    );
  }
  // the holder as others are told of it (SQLite keeps pid and host in columns of their own)
  await client.query(`UPDATE ${at.s}.meta SET lock_owner = $1, lock_since = now() WHERE id = 1`, [`${owner} (pid ${process.pid} on ${hostname()})`]);
}

/** Gives the lock back on its connection: true when it surely is (the connection may then be pooled again). */
export async function giveBackAdvisoryLock(client: pg.PoolClient, at: { readonly schema: string; readonly s: string }): Promise<boolean> {
  try {
    await client.query(`UPDATE ${at.s}.meta SET lock_owner = NULL, lock_since = NULL WHERE id = 1`);
    return (await client.query<{ ok: boolean }>("SELECT pg_advisory_unlock(hashtext($1), $2) AS ok", [at.schema, lockKeys.state])).rows[0]?.ok === true;
  } catch {
    // the connection is gone: so is the lock
    return false;
  }
}
