/**
 * Where a rollback goes (promote/rollback.ts through daemon/rollback-choice.ts), over random
 * histories of an environment promoted from another: promotions of any revision (the newest
 * candidate or a named one), runs that verify the revision in force or fail, rollbacks by steps
 * and to a named revision (with and without `--forward`), some rows written as older gatesyncs
 * wrote them (no `restores`). The rule reads only the promotion rows, newest first, as the state
 * holds them; a model keeps the list of revisions the environment stood on in memory and reads the
 * issue's words literally: `--steps N` is the N-th distinct revision before the one in force, in
 * what the environment applied, that it verified; a rollback takes off what stood above it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ErrorCode, GatesyncError } from "../../src/errors.js";
import { lineageOf, placeOf } from "../../src/promotion/rollback.js";
import type { AppliedEntry } from "../../src/promotion/rollback.js";
import type { SourceView } from "../../src/promotion/gates.js";
import { promotionChoice, rollbackChoice } from "../../src/promotion/rollback-choice.js";

type Action =
  | { readonly type: "commit" }
  | { readonly type: "promote"; readonly pick: number | "newest" }
  | { readonly type: "run"; readonly ok: boolean }
  | { readonly type: "steps"; readonly steps: number; readonly legacy: boolean }
  | { readonly type: "to"; readonly pick: number; readonly forward: boolean };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.constant({ type: "commit" as const }),
  fc.record({ type: fc.constant("promote" as const), pick: fc.oneof(fc.nat(12), fc.constant("newest" as const)) }),
  fc.record({ type: fc.constant("run" as const), ok: fc.boolean() }),
  fc.record({ type: fc.constant("run" as const), ok: fc.constant(true) }),
  fc.record({ type: fc.constant("steps" as const), steps: fc.integer({ min: 1, max: 3 }), legacy: fc.boolean() }),
  fc.record({ type: fc.constant("to" as const), pick: fc.nat(12), forward: fc.boolean() }),
);

/** The model: what the environment stood on, oldest first; what rollbacks took off since the top went on; what it verified. */
interface Model {
  commits: string[];
  stood: string[];
  abandoned: Set<string>;
  verified: Set<string>;
}

/** The rule's side: the promotion rows, newest first, as the daemon writes them. */
interface Rows {
  seq: number;
  rows: AppliedEntry[];
}

const hex = (n: number): string => n.toString(16).padStart(40, "a");
const viewOf = (m: Model): SourceView => ({ name: "production", soakMs: 0, verified: [...m.verified].map((revision) => ({ revision, at: 0 })), runs: [] });

function modelSteps(m: Model, steps: number): number | undefined {
  const current = m.stood[m.stood.length - 1];
  const seen = new Set([current]);
  let count = 0;
  for (let i = m.stood.length - 2; i >= 0; i--) {
    const r = m.stood[i]!;
    if (seen.has(r)) continue;
    seen.add(r);
    if (m.verified.has(r) && ++count === steps) return i;
  }
  return undefined;
}

function goBack(m: Model, index: number): void {
  for (const r of m.stood.slice(index + 1)) m.abandoned.add(r);
  m.stood = m.stood.slice(0, index + 1);
}

function putOn(m: Model, r: Rows, revision: string, row: Partial<AppliedEntry> = {}): void {
  m.stood.push(revision);
  m.abandoned = new Set();
  r.rows.unshift({ seq: ++r.seq, revision, rollback: false, ...row });
}

const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    if (err instanceof GatesyncError) return err.code;
    throw err;
  }
};

function promoteStep(m: Model, r: Rows, pick: number | "newest"): void {
  const asked = pick === "newest" ? undefined : m.commits[pick % m.commits.length]!;
  const lineage = lineageOf(r.rows);
  const newest = m.commits[m.commits.length - 1]!;
  if (asked === undefined && m.abandoned.has(newest)) {
    expect(codeOf(() => promotionChoice("production", lineage, { ...viewOf(m), name: "staging", verified: [{ revision: newest, at: 0 }] }, undefined))).toBe(
      ErrorCode.PROMOTION_REFUSED,
    );
    return;
  }
  const revision = asked ?? newest;
  if (m.stood[m.stood.length - 1] !== revision) putOn(m, r, revision);
}

function stepsStep(m: Model, r: Rows, steps: number, legacy: boolean): void {
  const lineage = lineageOf(r.rows);
  const at = modelSteps(m, steps);
  if (at === undefined) {
    expect(codeOf(() => rollbackChoice("production", lineage, viewOf(m), undefined, { steps }))).toBe(ErrorCode.PROMOTION_REFUSED);
    return;
  }
  const choice = rollbackChoice("production", lineage, viewOf(m), undefined, { steps })!;
  const revision = m.stood[at]!;
  expect(choice.revision).toBe(revision);
  const from = m.stood[m.stood.length - 1]!;
  goBack(m, at);
  r.rows.unshift({ seq: ++r.seq, revision, rollback: true, ...(legacy ? {} : { restores: choice.restores! }) });
  // what it left is newer than the one in force now (unless the environment also stood on it before): a plain --to refuses it
  if (!m.stood.includes(from)) expect(placeOf(lineageOf(r.rows), from).place).toBe("newer");
}

function toStep(m: Model, r: Rows, pick: number, forward: boolean): void {
  const revision = m.commits[pick % m.commits.length]!;
  const lineage = lineageOf(r.rows);
  const current = m.stood[m.stood.length - 1];
  let earlier = -1;
  for (let i = m.stood.length - 2; i >= 0 && earlier < 0; i--) if (m.stood[i] === revision) earlier = i;
  if (revision === current) {
    expect(rollbackChoice("production", lineage, viewOf(m), revision, { forward })).toBeUndefined();
    return;
  }
  if (earlier < 0 && !forward) {
    expect(codeOf(() => rollbackChoice("production", lineage, viewOf(m), revision, {}))).toBe(ErrorCode.PROMOTION_NOT_EARLIER);
    return;
  }
  const choice = rollbackChoice("production", lineage, viewOf(m), revision, { forward })!;
  expect(choice.revision).toBe(revision);
  // the gate: only where the environment applied and verified
  if (!m.verified.has(revision)) return;
  if (earlier >= 0) {
    goBack(m, earlier);
    r.rows.unshift({ seq: ++r.seq, revision, rollback: true, restores: choice.restores! });
  } else putOn(m, r, revision, { rollback: true, forward: true });
}

function step(m: Model, r: Rows, a: Action): void {
  if (a.type === "commit") m.commits.push(hex(m.commits.length));
  else if (a.type === "promote") promoteStep(m, r, a.pick);
  else if (m.stood.length === 0) return;
  else if (a.type === "run") {
    if (a.ok) m.verified.add(m.stood[m.stood.length - 1]!);
  } else if (a.type === "steps") stepsStep(m, r, a.steps, a.legacy);
  else toStep(m, r, a.pick, a.forward);
}

describe("the rollback's choice over random histories", () => {
  it("agrees with the model: --steps N counts back along what the environment stood on, --to past the one in force needs --forward", () => {
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 60 }), (actions) => {
        const m: Model = { commits: [hex(0)], stood: [], abandoned: new Set(), verified: new Set() };
        const r: Rows = { seq: 0, rows: [] };
        for (const a of actions) {
          step(m, r, a);
          // the fold of the rows stands where the model stands
          expect(lineageOf(r.rows).entries.map((e) => e.revision)).toEqual(m.stood);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("two --steps 1 in a row go v3 → v2 → v1, and a third is refused", () => {
    const m: Model = { commits: [hex(1), hex(2), hex(3)], stood: [], abandoned: new Set(), verified: new Set() };
    const r: Rows = { seq: 0, rows: [] };
    for (const pick of [0, 1, 2]) {
      step(m, r, { type: "promote", pick });
      step(m, r, { type: "run", ok: true });
    }
    step(m, r, { type: "steps", steps: 1, legacy: false });
    expect(m.stood).toEqual([hex(1), hex(2)]);
    step(m, r, { type: "steps", steps: 1, legacy: false });
    expect(m.stood).toEqual([hex(1)]);
    expect(codeOf(() => rollbackChoice("production", lineageOf(r.rows), viewOf(m), undefined, { steps: 1 }))).toBe(ErrorCode.PROMOTION_REFUSED);
  });
});
