/**
 * The tables of a SQLite state and their versioned migrations (as PostgreSQL's): each applied
 * once, in order, in one IMMEDIATE transaction, recorded in `schema_migrations`. A state at
 * the current version needs no write to be read. The tables are documented in docs/user/state.md.
 */
import type Database from "better-sqlite3";
import { ErrorCode, StateError } from "../../errors.js";
import { stateFormatVersion } from "../state.js";

const migrations: ReadonlyArray<{ readonly version: number; readonly sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        format_version INTEGER NOT NULL,
        lineage TEXT NOT NULL DEFAULT '',
        serial INTEGER NOT NULL DEFAULT 0,
        hash_key TEXT
      ) STRICT;
      INSERT INTO meta (id, format_version) VALUES (1, ${stateFormatVersion});
      CREATE TABLE resources (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        record TEXT NOT NULL CHECK (json_valid(record)),
        serial INTEGER NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE lock (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        token TEXT,
        holder TEXT,
        pid INTEGER,
        host TEXT,
        since TEXT,
        heartbeat INTEGER
      ) STRICT;
      INSERT INTO lock (id) VALUES (1);`,
  },
  {
    // the environment's history (history.ts): rows never touch the records or the serial
    version: 2,
    sql: `
      CREATE TABLE history (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        started_at TEXT NOT NULL,
        last_at TEXT NOT NULL,
        repeats INTEGER NOT NULL DEFAULT 0,
        fold_key TEXT,
        record TEXT NOT NULL CHECK (json_valid(record))
      ) STRICT;
      CREATE INDEX history_by_kind ON history (kind, seq);`,
  },
  {
    // the bound's age test after every append (sqlite-history.ts pruneAgeSql) walks an index, not
    // every row: a scan pulled each row's pages into the connection's cache, tens of MiB across
    // 20 environments' histories at their bound (bench/history.ts)
    version: 3,
    sql: `CREATE INDEX history_by_last_at ON history (last_at);`,
  },
];

export const latestSqliteMigration = migrations[migrations.length - 1]!.version;

function currentVersion(db: Database.Database): number {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
  if (!exists) return 0;
  return (db.prepare("SELECT max(version) AS v FROM schema_migrations").get() as { v: number | null }).v ?? 0;
}

/** Brings the tables to the latest version; refuses tables a newer gatesync made. */
export function migrateSqlite(db: Database.Database, file: string): void {
  const current = currentVersion(db);
  if (current === latestSqliteMigration) return;
  if (current > latestSqliteMigration) {
    throw new StateError(ErrorCode.STATE_VERSION, `the state ${file} is at schema version ${current}; this gatesync knows up to ${latestSqliteMigration}`, {
      hint: "use the newer gatesync that migrated it",
    });
  }
  db.transaction(() => {
    db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT");
    const applied = new Set((db.prepare("SELECT version FROM schema_migrations").all() as Array<{ version: number }>).map((r) => r.version));
    const record = db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)");
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      db.exec(m.sql);
      record.run(m.version, new Date().toISOString());
    }
  }).immediate();
}
