/**
 * The state in SQLite (better-sqlite3): the embedded default, one file such as
 * `.gatesync/state.db`. The same contract as the PostgreSQL backend:
 *
 * - WAL journal, `synchronous = FULL`: a write is on disk when its promise resolves, and a
 *   process killed at any moment leaves the last committed state (SQLite's recovery, not ours).
 * - `read()` is one read transaction: a consistent snapshot, no lock, no write.
 * - Writes asked for in the same turn of the event loop commit as one IMMEDIATE transaction
 *   (group commit: one fsync for a batch call's results); each bumps the serial by one, in the
 *   order asked. Every transaction first checks that this process still holds the lock.
 * - The lock is a row of the database (see sqlite-lock.ts), refreshed by a heartbeat.
 * - A full disk, an I/O error or a read-only file system is a STATE_IO error naming the file,
 *   the cause and the remedy; the transaction rolls back and the state stays as it was.
 */
import { randomUUID } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { sqliteDriver } from "./sqlite-driver.js";
import { ensureDirectory } from "../../ensure-directory.js";
import { ErrorCode, InternalError, StateError } from "../../errors.js";
import { boundRecord } from "../bound-record.js";
import type { HistoryBound } from "../../config/history-section.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery } from "../history/history.js";
import { payloadFields } from "../wrappers/lazy-record.js";
import { payloadTexts, recordsOf, withPayloads } from "../read-rows.js";
import type { HeadRow, PayloadColumns } from "../read-rows.js";
import { assertHolder, fenceLock, refreshLock, releaseLock, takeLock } from "./sqlite-lock.js";
import { checkSqliteHeader, retryWhileBusy } from "./sqlite-open.js";
import { appendSqliteHistory, readSqliteHistory } from "./sqlite-history.js";
import { migrateSqlite } from "./sqlite-schema.js";
import type { ResourceRecord, StateBackend, StateLock, StateSnapshot, StateVersion } from "../state.js";
import { checkStateFormat, emptySnapshot, movedSince, recordProblem, stateFormatVersion } from "../state.js";
import { busyError, stateIoError } from "../state-io.js";
import type { OwnershipRow } from "../ownership/ownership.js";
import type { ClaimedRecord } from "../state.js";
import { claimingOp, writeOp } from "./sqlite-claims.js";
import type { Op } from "./sqlite-claims.js";
import { statement } from "./statements.js";

export interface SqliteBackendOptions {
  /** A lock not refreshed for this long is taken over (default 60 s). */
  readonly staleMs?: number;
  /** How often a holder refreshes its lock (default 10 s). */
  readonly refreshMs?: number;
  /** How long a statement waits for another process's write transaction (default 5 s). */
  readonly busyTimeoutMs?: number;
}

type Meta = { format_version: number; lineage: string; serial: number; hash_key: string | null };
type Row = { readonly id: string; readonly head: string } & PayloadColumns;

/*
 * A record's row as read: the record without its payloads (parsed at once) and each payload's
 * JSON text (SQL NULL when absent), parsed when something reads it (lazy-record.ts) — or, when
 * the reader chooses whose payloads to read, first only whether each payload is there.
 */
const head = `json_remove(record, ${payloadFields.map((f) => `'$.${f}'`).join(", ")}) AS head`;
const texts = payloadFields.map((f) => `record -> '$.${f}' AS ${f}`).join(", ");
const selectRows = `SELECT id, ${head}, ${texts} FROM resources ORDER BY id`;
const selectHeads = `SELECT id, ${head}, ${payloadFields.map((f) => `record -> '$.${f}' IS NOT NULL AS ${f}`).join(", ")} FROM resources ORDER BY id`;
const selectPayloads = `SELECT id, ${texts} FROM resources WHERE id IN (SELECT value FROM json_each(?))`;

const headRow = (row: Row): HeadRow => ({ id: row.id, head: JSON.parse(row.head) as unknown, texts: payloadTexts(row) });

export class SqliteStateBackend implements StateBackend {
  readonly file: string;
  readonly description: string;
  private db: Database.Database | undefined;
  private held: { token: string; timer: NodeJS.Timeout } | undefined;
  private pending: Array<{ op: Op; resolve: () => void; reject: (err: unknown) => void }> = [];

  constructor(
    file: string,
    private readonly opts: SqliteBackendOptions = {},
  ) {
    this.file = path.resolve(file);
    this.description = `sqlite ${this.file}`;
  }

  /** The connection, opened (and migrated) on first use; undefined when reading a state never written. */
  private connection(create: boolean): Database.Database | undefined {
    if (this.db !== undefined) return this.db;
    if (!existsSync(this.file)) {
      if (!create) return undefined;
      // created empty (a valid empty database) and private: the state holds the hash key;
      // another process creating it at the same moment is fine
      try {
        writeFileSync(this.file, "", { mode: 0o600, flag: "wx" });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    checkSqliteHeader(this.file, (what) => this.corrupt(what));
    const Driver = sqliteDriver(this.file);
    const db = new Driver(this.file, { fileMustExist: true, timeout: this.opts.busyTimeoutMs ?? 5_000 });
    try {
      // two processes opening a new state at once: switching it to WAL answers SQLITE_BUSY at
      // once (SQLite's busy handler does not cover it), so the switch is retried for the timeout
      retryWhileBusy(() => db.pragma("journal_mode = WAL"), this.opts.busyTimeoutMs ?? 5_000);
      db.pragma("synchronous = FULL");
      retryWhileBusy(() => migrateSqlite(db, this.file), this.opts.busyTimeoutMs ?? 5_000);
    } catch (err) {
      db.close();
      throw err;
    }
    this.db = db;
    return db;
  }

  /** Runs `work`, turning storage failures into STATE_IO / STATE_CORRUPT errors. */
  private guard<T>(what: string, work: () => T): T {
    try {
      return work();
    } catch (err) {
      throw this.failure(what, err);
    }
  }

  private failure(what: string, err: unknown): StateError {
    if (err instanceof StateError) return err;
    const code = (err as { code?: unknown }).code;
    // a record that is not JSON (the table's CHECK keeps them out) is met by json_remove when read
    if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB" || (code === "SQLITE_ERROR" && /malformed JSON/.test((err as Error).message)))
      return this.corrupt((err as Error).message);
    // SQLite's own file lock, not gatesync's: a process stopped in the middle of a write (SIGSTOP,
    // a frozen VM) keeps it, and no stale time can take it over — only resuming or ending it can
    if (code === "SQLITE_BUSY") return busyError(what, this.file, this.opts.busyTimeoutMs ?? 5_000, err);
    return stateIoError(what, this.file, err);
  }

  // async: a failure is a rejected promise, as with PostgreSQL
  // eslint-disable-next-line @typescript-eslint/require-await
  async read(): Promise<StateSnapshot> {
    return this.guard("cannot read the state", () => this.readNow(selectRows));
  }

  // eslint-disable-next-line @typescript-eslint/require-await
  async readHeads(): Promise<StateSnapshot> {
    return this.guard("cannot read the state", () => this.readNow(selectHeads));
  }

  // eslint-disable-next-line @typescript-eslint/require-await
  async readPayloads(heads: StateSnapshot, ids: ReadonlySet<string>): Promise<StateSnapshot> {
    return this.guard("cannot read the state", () => {
      const db = this.connection(false);
      if (db === undefined) return emptySnapshot("");
      return db.transaction(() => {
        const meta = this.metaOf(db);
        if (movedSince(heads, meta)) return this.snapshotIn(db, selectRows);
        return withPayloads(heads, new Map((statement(db, selectPayloads).all(JSON.stringify([...ids])) as Row[]).map((r) => [r.id, payloadTexts(r)])));
      })();
    });
  }

  // eslint-disable-next-line @typescript-eslint/require-await
  async readVersion(): Promise<StateVersion> {
    return this.guard("cannot read the state", () => {
      const db = this.connection(false);
      if (db === undefined) return { lineage: "", serial: 0 };
      const meta = this.metaOf(db);
      return { lineage: meta.lineage, serial: meta.serial };
    });
  }

  private readNow(sql: string): StateSnapshot {
    const db = this.connection(false);
    if (db === undefined) return emptySnapshot("");
    return db.transaction(() => this.snapshotIn(db, sql))();
  }

  /** The snapshot `sql` selects (every payload's text, or only whether each is there), in the caller's transaction. */
  private snapshotIn(db: Database.Database, sql: string): StateSnapshot {
    const meta = this.metaOf(db);
    // row by row: the rows' texts are not all held at once beside the records made of them
    const rows = Array.from(db.prepare(sql).iterate() as IterableIterator<Row>, headRow);
    return { lineage: meta.lineage, serial: meta.serial, hashKey: meta.hash_key ?? undefined, resources: recordsOf(rows, (what) => this.corrupt(what)) };
  }

  /** The meta row, its format one this gatesync reads. */
  private metaOf(db: Database.Database): Meta {
    const meta = statement(db, "SELECT format_version, lineage, serial, hash_key FROM meta WHERE id = 1").get() as Meta | undefined;
    if (meta === undefined) throw this.corrupt("the meta row is missing");
    checkStateFormat(meta.format_version);
    return meta;
  }

  async lock(owner: string): Promise<StateLock> {
    if (this.held !== undefined) throw new StateError(ErrorCode.STATE_LOCKED, "this process holds the state lock already");
    await ensureDirectory(path.dirname(this.file)).catch((err: unknown) => {
      throw stateIoError("cannot create the state's directory", path.dirname(this.file), err);
    });
    const db = this.guard("cannot open the state", () => this.connection(true)!);
    const timing = { staleMs: this.opts.staleMs ?? 60_000 };
    const token = await takeLock(db, owner, timing, this.description).catch((err: unknown) => {
      throw this.failure("cannot take the state lock", err);
    });
    const timer = setInterval(() => {
      try {
        refreshLock(db, token);
      } catch {
        // a failed heartbeat only ages the lock; writes check the token themselves
      }
    }, this.opts.refreshMs ?? 10_000);
    timer.unref();
    this.held = { token, timer };
    return {
      release: () => this.release(token),
      check: () => {
        if (this.held?.token !== token) throw new InternalError("the state lock was checked after its release");
        try {
          fenceLock(db, token, timing, this.description);
        } catch (err) {
          throw err instanceof StateError ? err : this.failure("cannot check the state lock", err);
        }
      },
    };
  }

  private release(token: string): Promise<void> {
    if (this.held?.token !== token) return Promise.resolve();
    // writes already asked for commit first, under the lock
    this.flush();
    clearInterval(this.held.timer);
    this.held = undefined;
    try {
      releaseLock(this.db!, token);
    } catch {
      // cannot write (disk full): the lock stays until it is taken over as its process is gone
    }
    return Promise.resolve();
  }

  /** Queues `op` for the next group commit; resolves once it is on disk. */
  private enqueue(op: Op): Promise<void> {
    if (this.held === undefined) return Promise.reject(new InternalError("state written without holding its lock"));
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ op, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Commits every queued op as one transaction, after checking the lock inside it. */
  private flush(): void {
    const group = this.pending.splice(0);
    if (group.length === 0) return;
    const held = this.held;
    try {
      if (held === undefined) throw new InternalError("state written without holding its lock");
      const db = this.db!;
      db.transaction(() => {
        assertHolder(db, held.token, this.description);
        for (const g of group) g.op(db);
      }).immediate();
    } catch (err) {
      const e = this.failure("cannot write the state", err);
      for (const g of group) g.reject(e);
      return;
    }
    for (const g of group) g.resolve();
  }

  write(record: ResourceRecord): Promise<void> {
    const problem = recordProblem(record);
    if (problem !== undefined) return Promise.reject(new InternalError(`refusing to write an invalid record: ${problem}`));
    return this.enqueue(writeOp(record));
  }

  /** The claims and the records they win, in one transaction with the registry's file attached (sqlite-claims.ts). */
  writeClaiming(entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]> {
    if (this.held === undefined) return Promise.reject(new InternalError("state written without holding its lock"));
    let claiming: ReturnType<typeof claimingOp>;
    try {
      claiming = this.guard("cannot attach the ownership registry", () => claimingOp(this.db!, this.file, entries, now));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return this.enqueue(claiming.op).then(claiming.rows);
  }

  remove(id: string): Promise<void> {
    return this.enqueue((db) => {
      statement(db, "UPDATE meta SET serial = serial + 1 WHERE id = 1").run();
      statement(db, "DELETE FROM resources WHERE id = ?").run(id);
    });
  }

  initialise(hashKey: string | undefined): Promise<void> {
    const lineage = randomUUID();
    return this.enqueue((db) => {
      // a state that has a lineage keeps it (and its key): only a new state is initialised
      statement(db, "UPDATE meta SET serial = serial + 1, lineage = ?, hash_key = ? WHERE id = 1 AND serial = 0 AND lineage = ''").run(
        lineage,
        hashKey ?? null,
      );
    });
  }

  replaceAll(snapshot: StateSnapshot): Promise<void> {
    const rows = [...snapshot.resources.values()].map((r) => [r.id, r.kind, JSON.stringify(boundRecord(r))] as const);
    return this.enqueue((db) => {
      statement(db, "DELETE FROM resources").run();
      statement(db, "UPDATE meta SET lineage = ?, serial = ?, hash_key = ?, format_version = ? WHERE id = 1").run(
        snapshot.lineage,
        snapshot.serial,
        snapshot.hashKey ?? null,
        stateFormatVersion,
      );
      const insert = statement(db, "INSERT INTO resources (id, kind, record, serial, updated_at) VALUES (?, ?, ?, ?, ?)");
      const t = new Date().toISOString();
      for (const [id, kind, text] of rows) insert.run(id, kind, text, snapshot.serial, t);
    });
  }

  /** A state never written is created by its first row (the daemon's first run may be refused before any record). */
  async appendHistory(draft: HistoryDraft, bound: HistoryBound): Promise<HistoryEntry> {
    await ensureDirectory(path.dirname(this.file)).catch((err: unknown) => {
      throw stateIoError("cannot create the state's directory", path.dirname(this.file), err);
    });
    return this.guard("cannot write the history", () => appendSqliteHistory(this.connection(true)!, draft, bound, (what) => this.corrupt(what)));
  }

  // eslint-disable-next-line @typescript-eslint/require-await
  async readHistory(query: HistoryQuery): Promise<HistoryEntry[]> {
    return this.guard("cannot read the history", () => {
      const db = this.connection(false);
      return db === undefined ? [] : readSqliteHistory(db, query, (what) => this.corrupt(what));
    });
  }

  close(): Promise<void> {
    if (this.held !== undefined) void this.release(this.held.token);
    try {
      this.db?.close();
    } catch {
      // closing checkpoints the WAL; if that cannot be written the WAL stays and is replayed on open
    }
    this.db = undefined;
    return Promise.resolve();
  }

  private corrupt(what: string): StateError {
    return new StateError(ErrorCode.STATE_CORRUPT, `the state ${this.file} is corrupt: ${what}`, {
      hint: "it was left untouched; restore it from a backup (`gatesync state pull` makes one), or repair it with sqlite3 (docs/user/state.md)",
      location: { file: this.file },
    });
  }
}
