/**
 * A plan without the age identity (a merge request's plan job): each sensitive field holding a
 * SOPS value it could not decrypt is compared by its encrypted form instead (sealed-values.ts),
 * and the plan says so, field by field, in every format. A field whose encrypted value is the
 * one applied is no change; one encrypted again since is a change (its value never shown).
 */
import type { PathSegment } from "../text/field-path.js";
import { formatPath } from "../text/field-path.js";
import { isSensitiveMarker, sensitiveKey } from "../secrets/markers.js";
import { compareNotDecrypted, isNotDecrypted } from "../secrets/sealed-values.js";
import type { FieldChange } from "./diff.js";

/** A sensitive field this plan could not decrypt, and its encrypted form against what was applied. */
export interface NotCompared {
  readonly path: string;
  /** `unchanged`: as applied (no change); `changed`: encrypted again since (a change); `new`: nothing of it applied yet. */
  readonly encrypted: "unchanged" | "changed" | "new";
}

const markerHash = (value: unknown): string | undefined => (isSensitiveMarker(value) ? value[sensitiveKey] : undefined);

/** The field changes without those whose encrypted value is the one applied (they are not changes: the plan lists them as not compared). */
export function withoutUnchangedSealed(fields: readonly FieldChange[]): FieldChange[] {
  return fields.filter((f) => {
    const after = markerHash(f.after);
    return after === undefined || compareNotDecrypted(markerHash(f.before), after) !== "unchanged";
  });
}

function valueAt(value: unknown, path: readonly PathSegment[]): unknown {
  let at = value;
  for (const seg of path) {
    if (at === null || typeof at !== "object" || isSensitiveMarker(at)) return undefined;
    at = (at as Record<string | number, unknown>)[seg];
  }
  return at;
}

/** Every field of `compare` not decrypted here, judged against `applied` (undefined: nothing applied yet). */
export function notComparedFields(compare: unknown, applied: unknown): NotCompared[] {
  const out: NotCompared[] = [];
  const walk = (value: unknown, path: PathSegment[]): void => {
    const hash = markerHash(value);
    if (hash !== undefined) {
      if (!isNotDecrypted(hash)) return;
      const verdict = applied === undefined ? "new" : compareNotDecrypted(markerHash(valueAt(applied, path)), hash)!;
      out.push({ path: formatPath(path), encrypted: verdict });
      return;
    }
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, i]));
    else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
  };
  walk(compare, []);
  return out;
}

const verdictText: Record<NotCompared["encrypted"], string> = {
  unchanged: "encrypted value unchanged since the last apply: no change",
  changed: "encrypted value changed since the last apply: counted as a change",
  new: "not applied yet",
};

/** Each value a plan could not compare (every change, no-ops included), said as a line's parts. */
export function notComparedEntries(
  changes: ReadonlyArray<{ readonly id: string; readonly notCompared?: readonly NotCompared[] }>,
): Array<{ readonly id: string; readonly path: string; readonly verdict: string }> {
  return changes.flatMap((c) => (c.notCompared ?? []).map((n) => ({ id: c.id, path: n.path, verdict: verdictText[n.encrypted] })));
}

/** What heads the list of values a plan could not compare. */
export const notComparedHeading = (count: number): string =>
  `${count} sensitive value${count === 1 ? "" : "s"} from SOPS files not compared: no age identity here (SOPS_NO_IDENTITY); each was compared by its encrypted form, and is never shown`;
