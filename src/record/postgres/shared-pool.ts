/**
 * One pg.Pool per process and database: every environment's state (its reads, history, views
 * and its writer's lock) takes its connections from the one pool of its connection settings
 * (the URL and the sessions' application_name), so a replica's connections do not grow with the
 * environments it runs or follows. The pool is reference-counted: opened by its first user,
 * ended with its last.
 *
 * Its size and how long a user waits for a connection are the operator's (`state.pool` in
 * gatesync.yaml, docs/user/fleets.md). Places are handed out by a FairGate (fair-gate.ts): first
 * come first served, one environment never holding every connection, the locks never holding the
 * last one. A wait past its deadline is a StateError STATE_POOL_TIMEOUT naming the environment
 * and what it was doing.
 *
 * Other tables in the same database (a registry beside the state) use the same pool through
 * `openSharedPool` with the same settings, and give it back with `close()`.
 */
import { createRequire } from "node:module";
import type pg from "pg";
import { poolDefaults } from "../../config/pool-section.js";
import type { PoolConfig } from "../../config/pool-section.js";
import { ErrorCode, StateError } from "../../errors.js";
import { FairGate } from "./fair-gate.js";
import type { GateCounts, GateKind } from "./fair-gate.js";

const require = createRequire(import.meta.url);
let pgLoaded: typeof pg | undefined;
/** The PostgreSQL client, loaded with the first PostgreSQL state: a command on a SQLite state never loads it. */
export const pgModule = (): typeof pg => (pgLoaded ??= require("pg") as typeof pg);

/** `state.pool`: the size and the acquire deadline (src/config/pool-section.ts). */
export type PoolSettings = PoolConfig;

export interface SharedPoolOptions {
  readonly url: string;
  /** The sessions' application_name (a fleet replica's: a takeover ends them). */
  readonly applicationName?: string | undefined;
  readonly settings?: PoolSettings | undefined;
}

interface Entry {
  readonly pool: pg.Pool;
  readonly gate: FairGate;
  readonly settings: PoolSettings;
  refs: number;
}

const pools = new Map<string, Entry>();

const keyOf = (o: SharedPoolOptions): string => JSON.stringify([o.url, o.applicationName ?? null]);

/** The pools open in this process (for tests and /metrics): their key count. */
export function openPoolCount(): number {
  return pools.size;
}

/** One user's handle on the shared pool of its settings (the first user's size is the pool's). */
export function openSharedPool(o: SharedPoolOptions): SharedPool {
  const key = keyOf(o);
  let entry = pools.get(key);
  if (entry === undefined) {
    const settings = o.settings ?? poolDefaults;
    const named = o.applicationName === undefined ? {} : { application_name: o.applicationName };
    const pool = new (pgModule().Pool)({
      connectionString: o.url,
      max: settings.size,
      idleTimeoutMillis: 10_000,
      // the gate has admitted the caller: this bounds only the opening of a new connection
      connectionTimeoutMillis: settings.acquireMs,
      // a connection cut without a FIN (a partition) is noticed, and so a lock lost with it
      keepAlive: true,
      ...named,
    });
    // an idle client that loses its connection must not crash the process
    pool.on("error", () => undefined);
    // every client hears its own 'error' for its whole life, checked out or not: pg-pool listens
    // only while a client is idle, and a session ended while checked out (a takeover's
    // pg_terminate_backend, 57P01) emits 'error' on the client, which unheard ended the process.
    // Attached here, not after `pool.connect()` resolves: a new session terminated as it became
    // ready sends its FATAL in the same packet as ReadyForQuery, handled synchronously after
    // pg-pool hands the client out and before any caller's code runs
    // (test/fleet/sessions-terminated.e2e.test.ts). The statement in flight is rejected anyway,
    // and a lost lock is noticed by the lock's own listener (postgres-backend.ts).
    pool.on("connect", (client) => client.on("error", () => undefined));
    entry = { pool, gate: new FairGate(settings.size), settings, refs: 0 };
    pools.set(key, entry);
  }
  entry.refs++;
  return new SharedPool(entry, () => {
    if (--entry.refs > 0 || pools.get(key) !== entry) return Promise.resolve();
    pools.delete(key);
    return entry.pool.end().catch(() => undefined);
  });
}

/** A connection of the shared pool, held by one user; `release(destroy)` gives it back (or ends it). */
export interface HeldConnection {
  readonly client: pg.PoolClient;
  release(destroy?: boolean): void;
}

export class SharedPool {
  private closed = false;

  constructor(
    private readonly entry: Entry,
    private readonly end: () => Promise<void>,
  ) {}

  /** The pg.Pool itself, for a statement that needs no fair place (DDL at start, a registry's one query). */
  get pool(): pg.Pool {
    return this.entry.pool;
  }

  get settings(): PoolSettings {
    return this.entry.settings;
  }

  counts(): GateCounts {
    return this.entry.gate.counts();
  }

  /**
   * A connection for `user` (an environment), to `doing` (for the error): waits its turn, at most
   * the acquire deadline; `lock` for one held for a whole apply (the writer's lock).
   */
  async connect(user: string, doing: string, kind: GateKind = "read"): Promise<HeldConnection> {
    const { gate, pool, settings } = this.entry;
    const started = performance.now();
    const leave = await gate.enter(user, kind, settings.acquireMs, (c) => this.timeout(user, doing, c));
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      leave();
      if (performance.now() - started >= settings.acquireMs) throw this.timeout(user, doing, gate.counts());
      throw err;
    }
    // its 'error' is heard from its creation on (the pool's 'connect' listener above)
    let released = false;
    return {
      client,
      release: (destroy = false) => {
        if (released) return;
        released = true;
        client.release(destroy);
        leave();
      },
    };
  }

  /** `work` on a connection of its own, given back after (destroyed when `work` failed: its session's state is unknown). */
  async with<T>(user: string, doing: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const held = await this.connect(user, doing);
    let failed = false;
    try {
      return await work(held.client);
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      held.release(failed);
    }
  }

  private timeout(user: string, doing: string, c: GateCounts): StateError {
    const { size, acquireMs } = this.entry.settings;
    return new StateError(
      ErrorCode.STATE_POOL_TIMEOUT,
      `${user}: no PostgreSQL connection within ${acquireMs} ms to ${doing} (pool of ${size}: ${c.inUse} in use, ${c.locks} held by state locks, ${c.waiting} waiting)`,
      {
        hint: "the replica's pool is busy or the database is slow to answer: raise `state.pool.size` (within the database's max_connections, docs/user/fleets.md) or `state.pool.acquireTimeout`, or lower limits.concurrentEnvironments",
        location: { path: "state.pool" },
      },
    );
  }

  /** Gives this user's handle back; the pool ends with its last user. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return this.end();
  }
}
