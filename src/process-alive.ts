/**
 * Whether a process of this pid runs on this host — the one liveness check of a lock's holder
 * (the SQLite state's writer lock, a git clone's lock, a revision's work tree in use). EPERM: it
 * runs, as another user. A pid that names no single process (0 or below: a process group, or
 * every process, to `kill`; not an integer: a holder's file or row garbled) is no holder alive.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
