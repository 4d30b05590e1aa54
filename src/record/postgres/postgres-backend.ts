/**
 * The state in PostgreSQL, for several replicas and for plans computed in CI against the
 * state the daemon uses. The same contract as the SQLite backend (test/record/backend-contract.test.ts):
 *
 * - Tables live in their own schema and are created and migrated at start (postgres-schema.ts).
 * - `read()` is one REPEATABLE READ, READ ONLY transaction: a consistent snapshot, no lock.
 * - The writer's lock is a session advisory lock held on a dedicated connection, and every
 *   write travels on that same connection, in its own transaction that bumps the serial. A
 *   process whose connection (and so whose lock) is gone cannot write.
 */
import type pg from "pg";
import { ConfigError, ErrorCode, InternalError, StateError } from "../../errors.js";
import { boundRecord } from "../bound-record.js";
import type { ResourceRecord, StateBackend, StateLock, StateSnapshot, StateVersion } from "../state.js";
import { checkStateFormat, recordProblem, stateFormatVersion } from "../state.js";
import type { HistoryBound } from "../../config/history-section.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery } from "../history/history.js";
import { appendPostgresHistory, readPostgresHistory } from "./postgres-history.js";
import { migratePostgres } from "./postgres-schema.js";
import { giveBackAdvisoryLock, takeAdvisoryLock } from "./postgres-lock.js";
import { readPayloadsIn, readSnapshotIn } from "./postgres-read.js";
import type { OwnershipRow } from "../ownership/ownership.js";
import type { ClaimedRecord } from "../state.js";
import { claimingWriteIn, writeGroupIn } from "./postgres-write.js";
import { openSharedPool, pgModule } from "./shared-pool.js";
import type { HeldConnection, PoolSettings, SharedPool } from "./shared-pool.js";

export interface PostgresBackendOptions {
  readonly url: string;
  /** Schema holding gatesync's tables (a plain identifier). */
  readonly schema: string;
  /** The process's shared pool of this database (shared-pool.ts): its size and acquire deadline. */
  readonly pool?: PoolSettings;
  /** The sessions' application_name (a fleet replica's: a replica taking over its leases ends them). */
  readonly applicationName?: string;
  /** Who waits for a connection, in a STATE_POOL_TIMEOUT (`environment NAME`; default the schema). */
  readonly user?: string;
}

function ioError(what: string, err: unknown): StateError {
  const e = err as { code?: string; message?: string };
  return new StateError(ErrorCode.STATE_IO, `${what}: ${e.code === undefined ? "" : `${e.code} `}${e.message ?? String(err)}`, {
    hint: "check that PostgreSQL is reachable and the connection string (state.urlEnv) is right",
    cause: err,
  });
}

export class PostgresStateBackend implements StateBackend {
  readonly description: string;
  private readonly shared: SharedPool;
  private readonly user: string;
  private readonly s: string;
  private ready: Promise<void> | undefined;
  private lockHeld: HeldConnection | undefined;
  private lockClient: pg.PoolClient | undefined;
  /** Why the lock's connection (and so the lock) is gone, once it is. */
  private lockLost: string | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  /** The writes that will commit together in the transaction queued for them, and its end. */
  private group: ResourceRecord[] | undefined;
  private groupDone: Promise<void> = Promise.resolve();

  constructor(private readonly opts: PostgresBackendOptions) {
    if (!/^[a-z_][a-z0-9_]*$/.test(opts.schema))
      throw new ConfigError(ErrorCode.CONFIG_INVALID, `state.schema ${JSON.stringify(opts.schema)} is not a plain identifier`);
    this.s = pgModule().escapeIdentifier(opts.schema);
    // one pool per process and database, whatever the number of environments (shared-pool.ts)
    this.shared = openSharedPool({ url: opts.url, applicationName: opts.applicationName, settings: opts.pool });
    this.description = `postgres schema ${opts.schema}`;
    this.user = opts.user ?? `state ${opts.schema}`;
  }

  /** The process's shared pool this state takes its connections from (for other tables in the same database). */
  get connections(): SharedPool {
    return this.shared;
  }

  private on<T>(doing: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.shared.with(this.user, doing, work);
  }

  /** Creates or migrates the tables once; a state at the current version needs no DDL. */
  migrate(): Promise<void> {
    this.ready ??= migratePostgres((work) => this.on("prepare the state tables", work), this.opts.schema, this.s).catch((err: unknown) => {
      this.ready = undefined;
      throw err instanceof StateError ? err : ioError("cannot prepare the state tables", err);
    });
    return this.ready;
  }

  async readVersion(): Promise<StateVersion> {
    await this.migrate();
    const meta = (
      await this.on("read the state's version", (c) =>
        c.query<{ format_version: number; lineage: string; serial: string }>(`SELECT format_version, lineage, serial FROM ${this.s}.meta WHERE id = 1`),
      ).catch((err: unknown) => {
        throw err instanceof StateError ? err : ioError("cannot read the state", err);
      })
    ).rows[0];
    if (meta === undefined) throw this.corrupt("the meta row is missing");
    checkStateFormat(meta.format_version);
    return { lineage: meta.lineage, serial: Number(meta.serial) };
  }

  read(): Promise<StateSnapshot> {
    return this.readIn((client) => readSnapshotIn(client, this.s, "full", (what) => this.corrupt(what)));
  }

  readHeads(): Promise<StateSnapshot> {
    return this.readIn((client) => readSnapshotIn(client, this.s, "heads", (what) => this.corrupt(what)));
  }

  readPayloads(heads: StateSnapshot, ids: ReadonlySet<string>): Promise<StateSnapshot> {
    return this.readIn((client) => readPayloadsIn(client, this.s, { heads, ids }, (what) => this.corrupt(what)));
  }

  private async readIn(work: (client: pg.PoolClient) => Promise<StateSnapshot>): Promise<StateSnapshot> {
    await this.migrate();
    return this.inTransaction("read the state", work, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }

  async lock(owner: string): Promise<StateLock> {
    await this.migrate();
    if (this.lockClient !== undefined) throw new StateError(ErrorCode.STATE_LOCKED, "this process holds the state lock already");
    // a connection of the shared pool (keepAlive: a cut without a FIN is noticed, and so the lost
    // lock), held until the release; the locks never hold the pool's last connection (fair-gate.ts)
    let held: HeldConnection;
    try {
      held = await this.shared.connect(this.user, "take the state lock", "lock");
    } catch (err) {
      throw err instanceof StateError ? err : ioError("cannot take the state lock", err);
    }
    const client = held.client;
    const lost = (why: string): void => {
      if (this.lockClient === client) this.lockLost ??= why;
    };
    const onError = (err: Error): void => lost(err.message);
    const onEnd = (): void => lost("the connection ended");
    client.on("error", onError);
    client.on("end", onEnd);
    const giveBack = (destroy: boolean): void => {
      client.off("error", onError);
      client.off("end", onEnd);
      held.release(destroy);
    };
    try {
      await takeAdvisoryLock(client, { schema: this.opts.schema, s: this.s, description: this.description }, owner);
    } catch (err) {
      // a lock taken or not, the session's state is unknown: the connection is ended, not pooled
      giveBack(!(err instanceof StateError && err.code === ErrorCode.STATE_LOCKED));
      if (err instanceof StateError) throw err;
      throw ioError("cannot take the state lock", err);
    }
    this.lockClient = client;
    this.lockHeld = { client, release: giveBack };
    this.lockLost = undefined;
    this.group = undefined;
    return { release: () => this.release(client), check: () => this.checkLock(client) };
  }

  /** The fence: the lock is the session's, so it is held while its connection is. */
  private checkLock(client: pg.PoolClient): void {
    if (this.lockClient !== client) throw new InternalError("the state lock was checked after its release");
    if (this.lockLost !== undefined) throw this.lostError(this.lockLost);
  }

  private lostError(why: string): StateError {
    return new StateError(
      ErrorCode.STATE_LOCK_LOST,
      `this process no longer holds the state lock (${this.description}): its database connection is gone (${why})`,
      {
        hint: "a database restart, a fail-over or an idle timeout ends the session and its advisory lock; nothing more was sent or written by this run: run again (the next run takes the lock on a new connection)",
      },
    );
  }

  private async release(client: pg.PoolClient): Promise<void> {
    if (this.lockClient !== client) return;
    await this.tail;
    const held = this.lockHeld;
    const wasLost = this.lockLost !== undefined;
    this.lockClient = undefined;
    this.lockHeld = undefined;
    this.group = undefined;
    // back to the pool only once the lock is surely given back on it; else the connection is ended (and the lock with it)
    const unlocked = await giveBackAdvisoryLock(client, { schema: this.opts.schema, s: this.s });
    held?.release(wasLost || !unlocked);
  }

  /**
   * Runs `work` in a transaction on the lock's connection, one at a time, in the order asked.
   * A write asked for after this no longer joins an earlier group: it would commit before `work`.
   */
  private locked(work: (client: pg.PoolClient) => Promise<void>, starting?: () => void): Promise<void> {
    const client = this.lockClient;
    if (client === undefined) return Promise.reject(new InternalError("state written without holding its lock"));
    this.group = undefined;
    const run = async (): Promise<void> => {
      // a group closes when its transaction's turn comes, whether or not it can begin: a group
      // left open by a failed BEGIN (a dead connection) once took every later write of the
      // process with it, each given the old rejection without touching the database
      starting?.();
      if (this.lockLost !== undefined) throw this.lostError(this.lockLost);
      try {
        await client.query("BEGIN");
        await work(client);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        if (err instanceof StateError) throw err;
        if (this.lockLost !== undefined) throw this.lostError(this.lockLost);
        throw ioError("cannot write the state (the lock may be lost with the connection)", err);
      }
    };
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /**
   * Writes arriving while a transaction is under way wait for it together and then commit as
   * one (group commit): one round of BEGIN/UPDATE/INSERT/COMMIT and one WAL flush for a whole
   * batch call's results instead of one per record. Each write still bumps the serial by one,
   * and resolves only once its transaction has committed.
   */
  write(record: ResourceRecord): Promise<void> {
    const problem = recordProblem(record);
    if (problem !== undefined) return Promise.reject(new InternalError(`refusing to write an invalid record: ${problem}`));
    if (this.lockClient === undefined) return Promise.reject(new InternalError("state written without holding its lock"));
    let group = this.group;
    if (group === undefined) {
      const fresh: ResourceRecord[] = [];
      this.groupDone = this.locked(
        async (c) => writeGroupIn(c, this.s, fresh),
        () => {
          // from here on, new writes form the next group
          if (this.group === fresh) this.group = undefined;
        },
      );
      this.group = group = fresh;
    }
    group.push(boundRecord(record));
    return this.groupDone;
  }

  /** The claims and the records they win, in one transaction on the lock's connection: the registry's table is in this database. */
  writeClaiming(entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]> {
    let rows: OwnershipRow[] = [];
    return this.locked(async (c) => {
      rows = await claimingWriteIn(c, this.s, entries, now);
    }).then(() => rows);
  }

  remove(id: string): Promise<void> {
    return this.locked(async (c) => {
      await c.query(`UPDATE ${this.s}.meta SET serial = serial + 1 WHERE id = 1`);
      await c.query(`DELETE FROM ${this.s}.resources WHERE id = $1`, [id]);
    });
  }

  initialise(hashKey: string | undefined): Promise<void> {
    return this.locked(async (c) => {
      await c.query(
        `UPDATE ${this.s}.meta SET serial = serial + 1, lineage = gen_random_uuid()::text, hash_key = $1 WHERE id = 1 AND serial = 0 AND lineage = ''`,
        [hashKey ?? null],
      );
    });
  }

  replaceAll(snapshot: StateSnapshot): Promise<void> {
    return this.locked(async (c) => {
      await c.query(`DELETE FROM ${this.s}.resources`);
      await c.query(`UPDATE ${this.s}.meta SET lineage = $1, serial = $2, hash_key = $3, format_version = $4 WHERE id = 1`, [
        snapshot.lineage,
        snapshot.serial,
        snapshot.hashKey ?? null,
        stateFormatVersion,
      ]);
      for (const r of snapshot.resources.values()) {
        await c.query(`INSERT INTO ${this.s}.resources (id, kind, record, serial) VALUES ($1, $2, $3, $4)`, [
          r.id,
          r.kind,
          JSON.stringify(boundRecord(r)),
          snapshot.serial,
        ]);
      }
    });
  }

  async appendHistory(draft: HistoryDraft, bound: HistoryBound): Promise<HistoryEntry> {
    await this.migrate();
    return this.inTransaction("write the history", (client) => appendPostgresHistory(client, this.s, draft, bound, (what) => this.corrupt(what)));
  }

  async readHistory(query: HistoryQuery): Promise<HistoryEntry[]> {
    await this.migrate();
    return this.on("read the history", (c) => readPostgresHistory(c, this.s, query, (what) => this.corrupt(what))).catch((err: unknown) => {
      throw err instanceof StateError ? err : ioError("cannot read the history", err);
    });
  }

  /** One statement on this state's pooled connections, outside any transaction (a read needs none): the ownership registry's reads. */
  statement<T>(doing: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.on(doing, work).catch((err: unknown) => {
      throw err instanceof StateError ? err : ioError(`cannot ${doing}`, err);
    });
  }

  /** `work` in a transaction on this state's pooled connections: the ownership registry's way in (record/ownership/). */
  transaction<T>(doing: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.inTransaction(doing, work);
  }

  /** `work` in a transaction of its own on a pooled connection. */
  private async inTransaction<T>(doing: string, work: (client: pg.PoolClient) => Promise<T>, begin = "BEGIN"): Promise<T> {
    let held: HeldConnection;
    try {
      held = await this.shared.connect(this.user, doing);
    } catch (err) {
      throw err instanceof StateError ? err : ioError("cannot connect to the state database", err);
    }
    const client = held.client;
    let failed = false;
    try {
      await client.query(begin);
      const out = await work(client);
      await client.query("COMMIT");
      return out;
    } catch (err) {
      failed = await client.query("ROLLBACK").then(
        () => false,
        () => true,
      );
      throw err instanceof StateError ? err : ioError(`cannot ${doing}`, err);
    } finally {
      held.release(failed);
    }
  }

  async close(): Promise<void> {
    if (this.lockClient !== undefined) await this.release(this.lockClient);
    await this.shared.close();
  }

  private corrupt(what: string): StateError {
    return new StateError(ErrorCode.STATE_CORRUPT, `the state (${this.description}) is corrupt: ${what}`, {
      hint: "it was left untouched; restore the tables from a backup, or fix the row",
    });
  }
}
