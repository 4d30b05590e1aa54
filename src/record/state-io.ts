/**
 * Storage failures as STATE_IO errors that say which file, what happened and what to do. A full
 * disk, an I/O error and a read-only file system are told apart, from a Node errno code
 * (ENOSPC, EIO, EROFS …) or a SQLite result code (SQLITE_FULL, SQLITE_IOERR_*, SQLITE_READONLY …).
 */
import { statfsSync } from "node:fs";
import path from "node:path";
import { ErrorCode, StateError } from "../errors.js";

interface Cause {
  readonly cause: string;
  readonly remedy: string;
}

const full: Cause = { cause: "the disk is full", remedy: "free space on that file system, then run again: the state is intact and nothing is planned twice" };
const readOnly: Cause = {
  cause: "the file system is read-only or the file is not writable",
  remedy: "make it writable (remount read-write, fix the permissions), then run again",
};
const ioFailure: Cause = { cause: "an I/O error", remedy: "check the disk (dmesg, SMART); then run again: what was committed is intact" };

/** Whether the file system holding `file` has (almost) no space left. */
function nearlyFull(file: string): boolean {
  try {
    const fs = statfsSync(path.dirname(file));
    return fs.bavail * fs.bsize < 64 * 1024;
  } catch {
    return false;
  }
}

/** What went wrong, from the error's code; undefined for an error that is not about storage. */
export function storageCause(err: unknown, file?: string): (Cause & { readonly code: string }) | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return undefined;
  if (code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL") return { code, ...full };
  if (
    code === "EROFS" ||
    code === "EACCES" ||
    code === "EPERM" ||
    code.startsWith("SQLITE_READONLY") ||
    code === "SQLITE_CANTOPEN" ||
    code.startsWith("SQLITE_CANTOPEN_")
  )
    return { code, ...readOnly };
  if (code === "EIO" || code.startsWith("SQLITE_IOERR")) {
    // SQLite may report a full disk met while writing its WAL or shm as an I/O error
    const message = (err as Error).message ?? "";
    return /no space|disk is full|ENOSPC/i.test(message) || (file !== undefined && nearlyFull(file)) ? { code, ...full } : { code, ...ioFailure };
  }
  return undefined;
}

/** A STATE_IO error naming the file, the cause and the remedy. */
export function stateIoError(what: string, file: string, err: unknown): StateError {
  const known = storageCause(err, file);
  const code = (err as { code?: unknown } | null)?.code;
  const detail =
    known === undefined
      ? `${typeof code === "string" ? `${code}: ` : ""}${(err as Error | undefined)?.message ?? String(err)}`
      : `${known.cause} (${known.code})`;
  return new StateError(ErrorCode.STATE_IO, `${what} (${file}): ${detail}`, {
    hint: known?.remedy ?? "check that the file can be read and written, then run again",
    location: { file },
    cause: err,
  });
}

/**
 * STATE_LOCKED for SQLITE_BUSY: another process held SQLite's write lock on the file for the whole
 * busy timeout. gatesync's own lock names its holder; this one cannot (SQLite does not record it).
 */
export function busyError(what: string, file: string, waitedMs: number, err: unknown): StateError {
  return new StateError(
    ErrorCode.STATE_LOCKED,
    `${what} (${file}): another process has been writing the state database for over ${Math.round(waitedMs / 1000)} s`,
    {
      hint: "a gatesync (or another program) is writing it, or is stopped in the middle of a write (SIGSTOP, a frozen VM, a suspended job): let it finish, resume or end it, then run again",
      location: { file },
      cause: err,
    },
  );
}
