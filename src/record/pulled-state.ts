/**
 * The whole state as one JSON document: what `gatesync state pull` writes and `state push`
 * reads, and what a daemon serves at `GET /state` for merge-request plans.
 */
import { UsageError } from "../errors.js";
import type { ResourceRecord, StateSnapshot } from "./state.js";
import { recordOfJson } from "./wrappers/lazy-record.js";
import { recordProblem, stateFormatVersion } from "./state.js";

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
  if (v === null || typeof v !== "object" || v.format !== pulledFormat)
    throw new UsageError(`${file} is not a gatesync state (no "format": "${pulledFormat}")`, "give a file written by `gatesync state pull`");
  if (typeof v.formatVersion !== "number" || v.formatVersion > stateFormatVersion)
    throw new UsageError(`${file} has state format ${String(v.formatVersion)}; this gatesync reads format ${stateFormatVersion}`);
  if (typeof v.lineage !== "string" || !Number.isSafeInteger(v.serial) || !Array.isArray(v.resources))
    throw new UsageError(`${file}: lineage, serial or resources is missing or mistyped`);
  if (v.hashKey !== undefined && typeof v.hashKey !== "string") throw new UsageError(`${file}: hashKey is not a string`);
  const resources = new Map<string, ResourceRecord>();
  v.resources.forEach((r: unknown, i) => {
    const problem = recordProblem(r);
    if (problem !== undefined) throw new UsageError(`${file}: resources[${i}]: ${problem}`);
    const rec = recordOfJson(r as Record<string, unknown>);
    if (resources.has(rec.id)) throw new UsageError(`${file}: resources[${i}]: ${rec.id} appears twice`);
    resources.set(rec.id, rec);
  });
  return { lineage: v.lineage, serial: v.serial!, hashKey: v.hashKey, resources };
}
