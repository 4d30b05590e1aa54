/**
 * The promotion rules (src/promote) as a model: a chain dev → staging → production, where dev
 * follows the branch head and each other environment runs its newest promotion, under random
 * interleavings of commits, runs (healthy, failed, or telling nothing), the clock, manual
 * promotions of any revision and automatic ones. Property: no environment ever applies a revision
 * its source did not verify — judged by an oracle over the source's whole run log, not by the
 * rules' own verification rows. And the chain works: healthy runs carry a commit to production.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { autoCandidate, gateRefusal } from "../../src/promotion/gates.js";
import type { SourceView, Verified } from "../../src/promotion/gates.js";
import { soaked, streakOf } from "../../src/promotion/verification.js";
import type { RunFact } from "../../src/promotion/verification.js";

type Env = "dev" | "staging" | "production";
const sourceOf: Record<Env, Env | undefined> = { dev: undefined, staging: "dev", production: "staging" };

type Action =
  | { readonly type: "commit" }
  | { readonly type: "tick"; readonly ms: number }
  | { readonly type: "run"; readonly env: Env; readonly verdict: RunFact["verdict"] }
  | { readonly type: "promote"; readonly env: Env; readonly pick: number }
  | { readonly type: "auto"; readonly env: Env };

interface Model {
  now: number;
  commits: string[];
  runs: Record<Env, RunFact[]>;
  verified: Record<Env, Verified[]>;
  promotions: Record<Env, Verified[]>;
  applied: Array<{ env: Env; revision: string; at: number }>;
  soak: Record<Env, number>;
}

const inForce = (m: Model, env: Env): string | undefined => (env === "dev" ? m.commits[0] : m.promotions[env][0]?.revision);
const view = (m: Model, env: Env): SourceView => ({ name: env, soakMs: m.soak[env], verified: m.verified[env], runs: m.runs[env] });

/** The daemon after a run: a verification row when the newest runs span the soak (once per streak). */
function verify(m: Model, env: Env): void {
  const streak = streakOf(m.runs[env]);
  if (streak === undefined || !soaked(streak, m.soak[env])) return;
  if (m.verified[env][0]?.revision === streak.revision && m.verified[env][0].at >= streak.since) return;
  m.verified[env].unshift({ revision: streak.revision, at: m.now });
}

function promote(m: Model, env: Env, revision: string | undefined): void {
  const source = sourceOf[env];
  if (source === undefined || revision === undefined) return;
  if (gateRefusal(revision, view(m, source), m.now) === undefined) m.promotions[env].unshift({ revision, at: m.now });
}

function step(m: Model, a: Action): void {
  if (a.type === "commit") m.commits.unshift(`c${m.commits.length}`);
  else if (a.type === "tick") m.now += a.ms;
  else if (a.type === "run") {
    const revision = inForce(m, a.env);
    if (revision === undefined) return;
    m.runs[a.env].unshift({ revision, firstAt: m.now, lastAt: m.now, verdict: a.verdict });
    if (a.verdict !== "neutral") m.applied.push({ env: a.env, revision, at: m.now });
    verify(m, a.env);
  } else if (a.type === "promote") promote(m, a.env, m.commits[a.pick % m.commits.length]);
  else {
    const source = sourceOf[a.env];
    const current = m.promotions[a.env][0];
    if (source !== undefined) promote(m, a.env, autoCandidate(view(m, source), current)?.revision);
  }
}

/** The oracle: the source's log (oldest first) has healthy runs of `revision` spanning the soak, nothing else telling between them, by `at`. */
function verifiedByOracle(m: Model, source: Env, revision: string, at: number): boolean {
  const log = [...m.runs[source]].reverse().filter((r) => r.verdict !== "neutral" && r.lastAt <= at);
  for (let i = 0; i < log.length; i++) {
    for (let j = i; j < log.length; j++) {
      const run = log[j]!;
      if (run.verdict !== "ok" || run.revision !== revision) break;
      if (run.lastAt - log[i]!.firstAt >= m.soak[source]) return true;
    }
  }
  return false;
}

const envs = fc.constantFrom<Env>("dev", "staging", "production");
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.constant<Action>({ type: "commit" }),
  fc.record({ type: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 1500 }) }),
  fc.record({ type: fc.constant("run" as const), env: envs, verdict: fc.constantFrom<RunFact["verdict"]>("ok", "ok", "ok", "failed", "neutral") }),
  fc.record({ type: fc.constant("promote" as const), env: envs, pick: fc.nat() }),
  fc.record({ type: fc.constant("auto" as const), env: envs }),
);

const fresh = (soak: Record<Env, number>): Model => ({
  now: 1_000_000,
  commits: ["c0"],
  runs: { dev: [], staging: [], production: [] },
  verified: { dev: [], staging: [], production: [] },
  promotions: { dev: [], staging: [], production: [] },
  applied: [],
  soak,
});

describe("promotion rules", () => {
  it("never let an environment apply a revision its source did not verify, under any interleaving", () => {
    const soaks = fc.record({ dev: fc.constantFrom(0, 1000, 2000), staging: fc.constantFrom(0, 1000, 2000), production: fc.constant(0) });
    fc.assert(
      fc.property(soaks, fc.array(action, { maxLength: 120 }), (soak, actions) => {
        const m = fresh(soak);
        for (const a of actions) step(m, a);
        for (const { env, revision, at } of m.applied) {
          const source = sourceOf[env];
          if (source !== undefined) expect(verifiedByOracle(m, source, revision, at), `${env} applied ${revision} at ${at}`).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("carries a commit dev → staging → production with healthy runs, soaks and automatic promotions", () => {
    const m = fresh({ dev: 1000, staging: 1000, production: 0 });
    const round = (): void => {
      for (const env of ["dev", "staging", "production"] as const) {
        step(m, { type: "auto", env });
        step(m, { type: "run", env, verdict: "ok" });
      }
      step(m, { type: "tick", ms: 600 });
    };
    step(m, { type: "commit" });
    for (let i = 0; i < 8; i++) round();
    expect(inForce(m, "production")).toBe("c1");
    expect(m.applied.filter((a) => a.env === "production").map((a) => a.revision)).toEqual(m.applied.filter((a) => a.env === "production").map(() => "c1"));
  });

  it("says which gate a revision did not pass", () => {
    const m = fresh({ dev: 10_000, staging: 0, production: 0 });
    step(m, { type: "run", env: "dev", verdict: "ok" });
    expect(gateRefusal("c0", view(m, "dev"), m.now)).toBe("c0 is soaking in dev: 10s of its soak left");
    step(m, { type: "commit" });
    expect(gateRefusal("c1", view(m, "dev"), m.now)).toBe("c1 was not applied in dev");
    m.runs.dev.unshift({ revision: "c1", firstAt: m.now, lastAt: m.now, verdict: "failed", problem: "post-apply check failed: ApiDefinition/pets" });
    expect(gateRefusal("c1", view(m, "dev"), m.now)).toBe("c1 failed in dev: post-apply check failed: ApiDefinition/pets");
    expect(gateRefusal("c0", view(m, "dev"), m.now)).toBe("dev left c0 before its soak ended");
  });
});
