/**
 * The ownership registry in SQLite: `ownership.db` in the directory of the environments' states,
 * so every environment of a daemon (and every daemon on the host whose states share the
 * directory) reads and claims in one place. A claim is one IMMEDIATE transaction: two claimants
 * of one new object take turns, and the second finds the first's row.
 */
import path from "node:path";
import type Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { StateError } from "../../errors.js";
import { stateIoError } from "../state-io.js";
import { sqliteDriver } from "../sqlite/sqlite-driver.js";
import { rowOf } from "./ownership.js";
import type { Claimant, OwnershipClaim, OwnershipKey, OwnershipRegistry, OwnershipRow, OwnershipTarget } from "./ownership.js";
import { statement } from "../sqlite/statements.js";

const schemaOf = (table: string): string => `CREATE TABLE IF NOT EXISTS ${table} (
  interface TEXT NOT NULL,
  url TEXT NOT NULL,
  object TEXT NOT NULL,
  owner TEXT NOT NULL,
  environment TEXT NOT NULL,
  resource TEXT NOT NULL,
  claimed_at TEXT NOT NULL,
  PRIMARY KEY (interface, url, object)
) STRICT`;

/** The registry's file beside a SQLite state. */
export const ownershipFileBeside = (statePath: string): string => path.join(path.dirname(statePath), "ownership.db");

const validRows = (rows: readonly Record<string, unknown>[]): OwnershipRow[] => rows.map(rowOf).filter((r): r is OwnershipRow => typeof r !== "string");

/**
 * The registry's file attached to a state's connection as `ownership` (once), its table made if
 * it is not there: the state's write transactions then reach it (sqlite-backend.ts,
 * writeClaiming). Outside any transaction (ATTACH cannot be in one).
 */
export function attachRegistry(db: Database.Database, file: string): void {
  const attached = (db.pragma("database_list") as Array<{ name: string }>).some((d) => d.name === "ownership");
  if (attached) return;
  mkdirSync(path.dirname(file), { recursive: true });
  db.prepare("ATTACH DATABASE ? AS ownership").run(file);
  db.pragma("ownership.journal_mode = WAL");
  db.pragma("ownership.synchronous = FULL");
  db.exec(schemaOf("ownership.owners"));
}

/**
 * Claims what has no owner yet in the caller's transaction on `db` (`table`: `owners` in the
 * registry's own connection, `ownership.owners` in a state's), and answers the rows of every
 * claimed object after it.
 */
export function claimRowsIn(db: Database.Database, table: string, claims: readonly OwnershipClaim[], now: string): OwnershipRow[] {
  const insert = statement(
    db,
    `INSERT INTO ${table} (interface, url, object, owner, environment, resource, claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const select = statement(db, `SELECT * FROM ${table} WHERE interface = ? AND url = ? AND object = ?`);
  return claims.flatMap((c) => {
    insert.run(c.interface, c.url, c.object, c.owner, c.environment, c.resource, now);
    return validRows(select.all(c.interface, c.url, c.object) as Record<string, unknown>[]);
  });
}

export class SqliteOwnership implements OwnershipRegistry {
  readonly description: string;
  private db: Database.Database | undefined;

  constructor(private readonly file: string) {
    this.description = `ownership registry ${file}`;
  }

  private open(): Database.Database {
    if (this.db !== undefined) return this.db;
    // loaded only here (sqlite-driver.ts): a PostgreSQL state never needs the native driver
    const Driver = sqliteDriver(this.file);
    try {
      mkdirSync(path.dirname(this.file), { recursive: true });
      const db = new Driver(this.file, { timeout: 5000 });
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.exec(schemaOf("owners"));
      this.db = db;
      return db;
    } catch (err) {
      throw stateIoError("cannot open the ownership registry", this.file, err);
    }
  }

  private run<T>(what: string, work: (db: Database.Database) => T): Promise<T> {
    try {
      const db = this.open();
      return Promise.resolve(db.transaction(() => work(db)).immediate());
    } catch (err) {
      return Promise.reject(err instanceof StateError ? err : stateIoError(what, this.file, err));
    }
  }

  rowsOf(targets: readonly OwnershipTarget[]): Promise<OwnershipRow[]> {
    return this.run("cannot read the ownership registry", (db) => {
      const select = statement(db, "SELECT * FROM owners WHERE interface = ? AND url = ? ORDER BY object");
      return targets.flatMap((t) => validRows(select.all(t.interface, t.url) as Record<string, unknown>[]));
    });
  }

  rowsAt(keys: readonly OwnershipKey[]): Promise<OwnershipRow[]> {
    return this.run("cannot read the ownership registry", (db) => {
      const select = statement(db, "SELECT * FROM owners WHERE interface = ? AND url = ? AND object = ?");
      return keys.flatMap((k) => validRows(select.all(k.interface, k.url, k.object) as Record<string, unknown>[]));
    });
  }

  othersHold(target: OwnershipTarget, kind: string, me: Claimant): Promise<boolean> {
    return this.run("cannot read the ownership registry", (db) => {
      const found = statement(
        db,
        "SELECT 1 FROM owners WHERE interface = ? AND url = ? AND substr(object, 1, ?) = ? AND (owner <> ? OR environment <> ?) LIMIT 1",
      ).get(target.interface, target.url, kind.length + 1, `${kind}:`, me.owner, me.environment);
      return found !== undefined;
    });
  }

  all(): Promise<OwnershipRow[]> {
    return this.run("cannot read the ownership registry", (db) =>
      validRows(statement(db, "SELECT * FROM owners ORDER BY interface, url, object").all() as Record<string, unknown>[]),
    );
  }

  claim(claims: readonly OwnershipClaim[], now: string): Promise<OwnershipRow[]> {
    return this.run("cannot write the ownership registry", (db) => claimRowsIn(db, "owners", claims, now));
  }

  release(key: OwnershipKey): Promise<OwnershipRow | undefined> {
    return this.run("cannot write the ownership registry", (db) => {
      const row = statement(db, "DELETE FROM owners WHERE interface = ? AND url = ? AND object = ? RETURNING *").get(key.interface, key.url, key.object);
      return row === undefined ? undefined : validRows([row as Record<string, unknown>])[0];
    });
  }

  transfer(key: OwnershipKey, to: Claimant, now: string): Promise<OwnershipRow | undefined> {
    return this.run("cannot write the ownership registry", (db) => {
      const before = statement(db, "SELECT * FROM owners WHERE interface = ? AND url = ? AND object = ?").get(key.interface, key.url, key.object);
      if (before === undefined) return undefined;
      statement(db, "UPDATE owners SET owner = ?, environment = ?, claimed_at = ? WHERE interface = ? AND url = ? AND object = ?").run(
        to.owner,
        to.environment,
        now,
        key.interface,
        key.url,
        key.object,
      );
      return validRows([before as Record<string, unknown>])[0];
    });
  }

  close(): Promise<void> {
    this.db?.close();
    this.db = undefined;
    return Promise.resolve();
  }
}
