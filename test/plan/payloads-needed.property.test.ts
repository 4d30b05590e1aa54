/**
 * The state reads the payloads of the records `payloadsNeeded` names, and no other (a plan of
 * 100,000 unchanged resources then parses none of them); the planner must never read one it
 * was not given. Over generated edits of a recorded repository (records failed or in doubt,
 * specs changed, resources gone or adopted), a plan against a state whose other records hold no
 * payload is the plan against the whole state — and never throws.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { computePlan } from "../../src/plan/plan.js";
import { payloadsNeeded } from "../../src/plan/decide-change.js";
import { lazyRecord, payloadFields, unreadPayload } from "../../src/record/wrappers/lazy-record.js";
import type { PayloadTexts } from "../../src/record/wrappers/lazy-record.js";
import type { ResourceRecord, StateSnapshot } from "../../src/record/state.js";
import { desiredFrom, emptyState, petstore, planFor, planOptions, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { orgKey } from "../helpers/resources.js";

afterAll(removeTempRepos);

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 20);
const keys = 5;
const key = (i: number, rate: number, adopt = false): string =>
  orgKey({ name: `k${i}`, keyId: `org-${i}`, rate }).replace("metadata:\n", `metadata:\n${adopt ? `  annotations: { gatesync.dev/adopt: srv-x${i} }\n` : ""}`);
const filesOf = (edits: readonly Edit[]): Record<string, string> => {
  const files: Record<string, string> = { "api.yaml": petstore };
  edits.forEach((e, i) => {
    if (!e.gone) files[`k${i}.yaml`] = key(i, e.rateChanged ? 100 + i : i + 1, e.adopt);
  });
  return files;
};

interface Edit {
  readonly status: ResourceRecord["status"];
  readonly rateChanged: boolean;
  readonly gone: boolean;
  readonly adopt: boolean;
}

const edit = fc.record({
  status: fc.constantFrom<ResourceRecord["status"]>("applied", "applied", "failed", "in-doubt"),
  rateChanged: fc.boolean(),
  gone: fc.boolean(),
  adopt: fc.boolean(),
});

/** The state as read with `readHeads`, then `readPayloads` of what `payloadsNeeded` names: the others' payloads held but not read. */
function leanState(state: StateSnapshot, needed: ReadonlySet<string>): StateSnapshot {
  const resources = new Map<string, ResourceRecord>();
  for (const [id, r] of state.resources) {
    if (needed.has(id)) {
      resources.set(id, r);
      continue;
    }
    const head: Record<string, unknown> = {};
    const texts: PayloadTexts = {};
    for (const [k, v] of Object.entries(r)) {
      if ((payloadFields as readonly string[]).includes(k)) texts[k as (typeof payloadFields)[number]] = unreadPayload;
      else head[k] = v;
    }
    resources.set(id, lazyRecord(head, texts));
  }
  return { ...state, resources };
}

describe("the payloads a plan reads", () => {
  it("are exactly those payloadsNeeded names: a plan without the others' is the same plan (property)", async () => {
    const initial = Array.from({ length: keys }, () => ({ status: "applied" as const, rateChanged: false, gone: false, adopt: false }));
    const first = await desiredFrom(filesOf(initial));
    const recorded = recordPlan(planFor(first), first.desired, emptyState);
    await fc.assert(
      fc.asyncProperty(
        fc.array(edit, { minLength: keys, maxLength: keys }),
        edit.map((e) => e.status),
        fc.constantFrom("report" as const, "deactivate" as const),
        fc.boolean(),
        async (edits, apiStatus, orphans, reassert) => {
          const resources = new Map(recorded.resources);
          const settle = (id: string, status: ResourceRecord["status"]): void => {
            const r = resources.get(id)!;
            resources.set(id, { ...r, status, ...(status === "applied" ? {} : { error: "500" }) });
          };
          edits.forEach((e, i) => settle(`OrgKey/k${i}`, e.status));
          // an API's create is no upsert: in doubt, the planner compares what was attempted
          settle("ApiDefinition/petstore", apiStatus);
          const state = { ...recorded, resources };
          const next = await desiredFrom(filesOf(edits));
          const options = { ...planOptions, orphans, reassert };
          const lean = leanState(state, payloadsNeeded(next.desired, state));
          expect(computePlan(next.desired, lean, options)).toEqual(computePlan(next.desired, state, options));
        },
      ),
      { numRuns: runs },
    );
  });
});
