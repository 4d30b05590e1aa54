/**
 * `gatesync state pull` and `state push`: the whole state as one JSON document, so people can
 * read and repair it with ordinary tools. A push replaces the state only when its lineage
 * matches and nothing was written since it was pulled (else `--force`); its serial moves past
 * the current one, so plans saved before it are refused.
 */
import { readFile } from "node:fs/promises";
import { ErrorCode, StateError, UsageError } from "../errors.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../record/state.js";
import { recordProblem, stateFormatVersion } from "../record/state.js";

export const pulledFormat = "gatesync-state";

/** What `state pull` writes. */
export interface PulledState {
  readonly format: typeof pulledFormat;
  readonly formatVersion: number;
  readonly lineage: string;
  readonly serial: number;
  readonly hashKey?: string;
  readonly resources: readonly ResourceRecord[];
}

export function pulledState(s: StateSnapshot): PulledState {
  return {
    format: pulledFormat,
    formatVersion: stateFormatVersion,
    lineage: s.lineage,
    serial: s.serial,
    ...(s.hashKey === undefined ? {} : { hashKey: s.hashKey }),
    resources: [...s.resources.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
  };
}

/** Parses and checks a pulled document; every problem is a USAGE error naming the file. */
export function parsePulled(text: string, file: string): StateSnapshot {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`, "give a file written by `gatesync state pull`");
  }
  const v = value as Partial<PulledState> | null;
  if (v === null || typeof v !== "object" || v.format !== pulledFormat) throw new UsageError(`${file} is not a gatesync state (no "format": "${pulledFormat}")`, "give a file written by `gatesync state pull`");
  if (typeof v.formatVersion !== "number" || v.formatVersion > stateFormatVersion) throw new UsageError(`${file} has state format ${String(v.formatVersion)}; this gatesync reads format ${stateFormatVersion}`);
  if (typeof v.lineage !== "string" || !Number.isSafeInteger(v.serial) || !Array.isArray(v.resources)) throw new UsageError(`${file}: lineage, serial or resources is missing or mistyped`);
  if (v.hashKey !== undefined && typeof v.hashKey !== "string") throw new UsageError(`${file}: hashKey is not a string`);
  const resources = new Map<string, ResourceRecord>();
  v.resources.forEach((r: unknown, i) => {
    const problem = recordProblem(r);
    if (problem !== undefined) throw new UsageError(`${file}: resources[${i}]: ${problem}`);
    const rec = r as ResourceRecord;
    if (resources.has(rec.id)) throw new UsageError(`${file}: resources[${i}]: ${rec.id} appears twice`);
    resources.set(rec.id, rec);
  });
  return { lineage: v.lineage, serial: v.serial!, hashKey: v.hashKey, resources };
}

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
        throw new StateError(ErrorCode.STATE_CHANGED, `${file} is of another state (lineage ${pushed.lineage || "none"}; this state's is ${current.lineage})`, { hint: "push a file pulled from this state, or pass --force to replace it anyway" });
      }
      if (pushed.serial < current.serial) {
        throw new StateError(ErrorCode.STATE_CHANGED, `the state was written since ${file} was pulled (serial ${pushed.serial}; it is now ${current.serial})`, { hint: "pull again and redo the edit, or pass --force to replace what was written since" });
      }
    }
    const written: StateSnapshot = { ...pushed, hashKey: pushed.hashKey ?? current.hashKey, serial: Math.max(pushed.serial, current.serial) + 1 };
    await backend.replaceAll(written);
    return written;
  } finally {
    await lock.release();
  }
}
