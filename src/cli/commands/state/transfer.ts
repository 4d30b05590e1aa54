/**
 * `gatesync state pull` and `state push`: the whole state as one JSON document, so people can
 * read and repair it with ordinary tools. A push replaces the state only when its lineage
 * matches and nothing was written since it was pulled (else `--force`); its serial moves past
 * the current one, so plans saved before it are refused.
 */
import { readFile } from "node:fs/promises";
import { ErrorCode, StateError, UsageError } from "../../../errors.js";
import { parsePulled } from "../../../record/pulled-state.js";
import type { StateBackend, StateSnapshot } from "../../../record/state.js";

export { parsePulled, pulledFormat, pulledState } from "../../../record/pulled-state.js";
export type { PulledState } from "../../../record/pulled-state.js";

/** Loads `file` into `backend` under its lock; returns the snapshot written. */
export async function pushState(backend: StateBackend, file: string, force: boolean): Promise<StateSnapshot> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const pushed = parsePulled(text, file);
  const lock = await backend.lock("gatesync state push");
  try {
    const current = await backend.read();
    if (!force && current.serial > 0) {
      if (pushed.lineage !== current.lineage) {
        throw new StateError(ErrorCode.STATE_CHANGED, `${file} is of another state (lineage ${pushed.lineage || "none"}; this state's is ${current.lineage})`, {
          hint: "push a file pulled from this state, or pass --force to replace it anyway",
        });
      }
      if (pushed.serial < current.serial) {
        throw new StateError(ErrorCode.STATE_CHANGED, `the state was written since ${file} was pulled (serial ${pushed.serial}; it is now ${current.serial})`, {
          hint: "pull again and redo the edit, or pass --force to replace what was written since",
        });
      }
    }
    const written: StateSnapshot = { ...pushed, hashKey: pushed.hashKey ?? current.hashKey, serial: Math.max(pushed.serial, current.serial) + 1 };
    await backend.replaceAll(written);
    return written;
  } finally {
    await lock.release();
  }
}
