/**
 * Each connection's statements, compiled once: better-sqlite3 compiles a statement anew at every
 * `prepare()`, and a daemon's run asks for the same dozen again and again (the lock, the meta
 * row, the records, the history: ~1 ms of a webhook's run, docs/dev/performance.md). A statement
 * kept here is used by one call at a time — `get`, `run` and `all` end before they return; one
 * that is iterated is prepared where it is used.
 */
import type Database from "better-sqlite3";

const kept = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/** `db.prepare(sql)`, compiled on the connection's first use of `sql`. */
export function statement(db: Database.Database, sql: string): Database.Statement {
  let statements = kept.get(db);
  if (statements === undefined) kept.set(db, (statements = new Map<string, Database.Statement>()));
  let compiled = statements.get(sql);
  if (compiled === undefined) statements.set(sql, (compiled = db.prepare(sql)));
  return compiled;
}
