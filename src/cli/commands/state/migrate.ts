/** `gatesync state migrate`: copies a whole state from one backend to another, losing nothing. */
import { ErrorCode, StateError, UsageError } from "../../../errors.js";
import type { StateBackend, StateSnapshot } from "../../../record/state.js";
import type { CliIo } from "../../common/cli-io.js";

const owner = (): string => "gatesync state migrate";

/** Replaces the target with `snapshot` under the target's lock (a target not empty only with `force`). */
async function copyInto(to: StateBackend, snapshot: StateSnapshot, force: boolean): Promise<void> {
  const toLock = await to.lock(owner());
  try {
    const existing = await to.read();
    if (existing.serial > 0 && !force) {
      throw new UsageError(`the target (${to.description}) is not empty: serial ${existing.serial}, ${existing.resources.size} records`, {
        hint: "pass --force to replace it",
      });
    }
    await to.replaceAll(snapshot);
  } finally {
    await toLock.release();
  }
}

export async function migrateState(from: StateBackend, to: StateBackend, force: boolean, io: CliIo): Promise<void> {
  // a source that was never written (a mistyped path reads as empty): nothing to copy, and
  // copying it would only empty a target; checked before locking, which creates the database
  const source = await from.read();
  if (source.serial === 0 && source.resources.size === 0) {
    throw new UsageError(`the source state (${from.description}) is empty: there is nothing to migrate`, {
      hint: "check --from: a wrong path reads as an empty state",
    });
  }
  // both locked: nobody writes to either while the copy is made
  const fromLock = await from.lock(owner());
  try {
    const snapshot = await from.read();
    await copyInto(to, snapshot, force);
    const copied = await to.read();
    if (copied.serial !== snapshot.serial || copied.resources.size !== snapshot.resources.size || copied.lineage !== snapshot.lineage) {
      throw new StateError(ErrorCode.STATE_IO, "the copy does not match the source", {
        hint: "the target may have been written meanwhile; run the migration again",
      });
    }
    io.stdout(
      `migrated ${snapshot.resources.size} records (serial ${snapshot.serial}, lineage ${snapshot.lineage === "" ? "none" : snapshot.lineage}) from ${from.description} to ${to.description}\n`,
    );
  } finally {
    await fromLock.release();
  }
}
