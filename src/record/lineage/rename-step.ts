/** One step of a record's rename lineage (rename-lineage.ts) and the check of a lineage read from storage: a leaf, which state.ts imports. */

/** One move of a record: it was `from`, it became `to`. */
export interface RenameStep {
  readonly from: string;
  readonly to: string;
  /** When the apply moved the record. */
  readonly at: string;
  /** The commit whose apply moved it. */
  readonly commit?: string;
}

/**
 * The steps a record keeps (the newest): a repository that renames one resource at every commit
 * does not grow its record without end. An earlier name older than that many moves is forgotten.
 */
export const maxRenameSteps = 64;

// a lineage read from a dump or a pushed state is printed in plans: `Kind/name` of printable characters, an ISO time, a commit id
// eslint-disable-next-line no-control-regex -- refusing them is the point
const resourceIdPattern = /^[A-Za-z]{1,64}\/[^\u0000-\u001f\u007f-\u009f]{1,253}$/;
const timePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
export const commitPattern = /^[0-9a-f]{4,64}$/;

const isStep = (v: unknown): v is RenameStep => {
  if (v === null || typeof v !== "object") return false;
  const s = v as Record<string, unknown>;
  const text = (x: unknown, p: RegExp): boolean => typeof x === "string" && p.test(x);
  return (
    text(s.from, resourceIdPattern) && text(s.to, resourceIdPattern) && text(s.at, timePattern) && (s.commit === undefined || text(s.commit, commitPattern))
  );
};

/** What is wrong with a record's `renames` as read from storage (a dump, a pushed state), or undefined. */
export function renamesProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return "its renames are not a list";
  if (value.length > maxRenameSteps) return `it has ${value.length} renames (at most ${maxRenameSteps} are kept)`;
  const bad = value.findIndex((v) => !isStep(v));
  return bad < 0 ? undefined : `renames[${bad}] is not a step {from: Kind/name, to: Kind/name, at: ISO time, commit?: commit id}`;
}
