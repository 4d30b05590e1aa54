/**
 * better-sqlite3, loaded when a SQLite state is first opened — not when gatesync starts.
 *
 * It is an optional peer dependency: the packed gatesync installs without it (its native
 * build is the one install script of gatesync's own dependencies, and CI jobs that plan
 * against the daemon's state, validate or hook never open a SQLite file), and a repository
 * that keeps its state in SQLite adds it beside gatesync. Node's own `node:sqlite` would need
 * no build but is not in Node 20 (docs/dev/performance.md, "The package").
 */
import { createRequire } from "node:module";
import type Database from "better-sqlite3";
import { StateError } from "../../errors.js";

type Driver = typeof Database;
let driver: Driver | undefined;

/** The command that adds the driver, as the error prints it. */
export const addSqliteDriver = "npm install better-sqlite3";

/** better-sqlite3's constructor; a STATE_SQLITE_MISSING error naming the state file when it is not installed. */
export function sqliteDriver(file: string): Driver {
  if (driver !== undefined) return driver;
  try {
    driver = createRequire(import.meta.url)("better-sqlite3") as Driver;
    return driver;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw err;
    throw new StateError("STATE_SQLITE_MISSING", `the state is a SQLite file (${file}) and better-sqlite3 is not installed`, {
      hint: `add it beside gatesync: ${addSqliteDriver} (its install script builds or downloads SQLite), or keep the state in PostgreSQL or the daemon's (--state-url)`,
      cause: err,
    });
  }
}
