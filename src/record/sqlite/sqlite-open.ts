/**
 * Opening a SQLite state file: what is checked before SQLite sees the file (an old JSON state,
 * a file that is not SQLite), and the retry of what SQLite's busy handler does not cover.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { ErrorCode, StateError } from "../../errors.js";

const sqliteHeader = "SQLite format 3\0";

/** The command that moves an old JSON state file into SQLite. */
export function migrateCommand(jsonFile: string, dbFile: string): string {
  return `gatesync state migrate --from file:${jsonFile} --to sqlite:${dbFile}`;
}

/** Runs `work` again (20 ms apart, blocking: it only happens while opening) while SQLite answers SQLITE_BUSY, for at most `ms`. */
export function retryWhileBusy<T>(work: () => T, ms: number): T {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return work();
    } catch (err) {
      if ((err as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() > until) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

/** A file that is not SQLite is never opened as one (SQLite would call it "not a database"). */
export function checkSqliteHeader(file: string, corrupt: (what: string) => StateError): void {
  const fd = openSync(file, "r");
  const buf = Buffer.alloc(16);
  let n: number;
  try {
    n = readSync(fd, buf, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (n === 0 || buf.toString("latin1", 0, n) === sqliteHeader) return;
  if (buf.toString("utf8", 0, n).trimStart().startsWith("{")) {
    const target = file.endsWith(".json") ? `${file.slice(0, -5)}.db` : `${file}.db`;
    throw new StateError(ErrorCode.STATE_VERSION, `the state ${file} is an old gatesync state file (JSON), not a SQLite database`, {
      hint: `move it over with \`${migrateCommand(file, target)}\` and set state.path to ${target}`,
      location: { file },
    });
  }
  throw corrupt("it is not a SQLite database");
}
