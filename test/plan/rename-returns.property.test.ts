/**
 * A model of renames and returns (issue 54): random sequences of commits that rename webhooks
 * (declared with gatesync.dev/moved-from, the spec changed or not), change them, remove and add
 * them back, and go back to an earlier commit (a rollback, a `git revert`, an old commit applied
 * again — with its annotations, or with them cleaned up). Each commit is planned against the
 * state the previous applies left and recorded as applied. Never a create of a name the state
 * holds under another name; never a second object for one webhook of the model; and a commit
 * applied without anything blocked leaves each of its webhooks recorded once, under its name,
 * with the server id of its first create.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { DesiredSet } from "../../src/plan/desired.js";
import { formerIds } from "../../src/record/lineage/rename-lineage.js";
import type { StateSnapshot } from "../../src/record/state.js";
import { desiredFrom, doc, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 30);

/** One webhook of the model as one commit declares it. */
interface Hook {
  readonly name: string;
  readonly title: number;
  readonly url: number;
  /** The name the commit declares it renamed from. */
  readonly movedFrom?: string;
}
/** A commit: each model webhook (by index) declared or not. */
type Commit = ReadonlyArray<Hook | undefined>;

const step = fc.oneof(
  fc.record({ t: fc.constant("rename" as const), hook: fc.nat(1), name: fc.nat(3), title: fc.option(fc.nat(2), { nil: undefined }) }),
  fc.record({ t: fc.constant("change" as const), hook: fc.nat(1), url: fc.nat(2) }),
  fc.record({ t: fc.constant("toggle" as const), hook: fc.nat(1) }),
  fc.record({ t: fc.constant("back" as const), to: fc.nat(), strip: fc.boolean() }),
);
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

const first: Commit = [
  { name: "h0-n0", title: 0, url: 0 },
  { name: "h1-n0", title: 0, url: 0 },
];

function nextCommit(commits: readonly Commit[], s: Step): Commit {
  const last = commits[commits.length - 1]!;
  const strip = (h: Hook | undefined): Hook | undefined => (h === undefined ? undefined : { name: h.name, title: h.title, url: h.url });
  if (s.t === "back") {
    const earlier = commits[s.to % commits.length]!;
    return s.strip ? earlier.map(strip) : earlier;
  }
  return last.map((h, i) => {
    if (i !== s.hook) return strip(h);
    if (s.t === "toggle") return h === undefined ? { name: `h${i}-n0`, title: 0, url: 0 } : undefined;
    if (h === undefined) return undefined;
    if (s.t === "change") return { ...strip(h)!, url: s.url };
    const name = `h${i}-n${s.name}`;
    return name === h.name ? strip(h) : { name, title: s.title ?? h.title, url: h.url, movedFrom: h.name };
  });
}

const filesOf = (c: Commit): Record<string, string> =>
  Object.fromEntries(
    c.flatMap((h, i) =>
      h === undefined
        ? []
        : [
            [
              `hook-${i}.yaml`,
              doc(
                "PortalWebhook",
                h.name,
                `Name: hook ${i} v${h.title}\nURL: https://hooks.example/${i}/${h.url}\nMethod: POST\nEvents: [UserRegistered]`,
              ).replace(
                `  name: ${h.name}\n`,
                `  name: ${h.name}\n${h.movedFrom === undefined ? "" : `  annotations: { gatesync.dev/moved-from: ${h.movedFrom} }\n`}`,
              ),
            ],
          ],
    ),
  );

describe("renames and returns (model)", () => {
  it("never creates a name the state holds under another name, nor a second object for one webhook", async () => {
    const sets = new Map<string, DesiredSet>();
    const desiredOf = async (c: Commit): Promise<DesiredSet> => {
      const key = JSON.stringify(c);
      const known = sets.get(key);
      if (known !== undefined) return known;
      const set = await desiredFrom(filesOf(c));
      sets.set(key, set);
      return set;
    };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 7 }), async (steps) => {
        const commits: Commit[] = [first];
        for (const s of steps) commits.push(nextCommit(commits, s));
        let state: StateSnapshot = emptyState;
        // the server id each model webhook was created with: a second create is a second object
        const created = new Map<number, string>();
        for (const commit of commits) {
          const set = await desiredOf(commit);
          const plan = planFor(set, state);
          const held = new Map([...state.resources.values()].flatMap((r) => formerIds(r).map((id) => [id, r.id] as const)));
          for (const c of plan.changes.filter((x) => x.action === "create")) {
            expect(held.get(c.id), `${c.id} created although the state holds it as ${held.get(c.id)}`).toBeUndefined();
            const hook = commit.findIndex((h) => h !== undefined && `PortalWebhook/${h.name}` === c.id);
            expect(created.has(hook), `a second object for webhook ${hook} (${c.id})`).toBe(false);
            created.set(hook, `srv-${c.name}`);
          }
          state = recordPlan(plan, set.desired, state);
          if (plan.changes.some((c) => c.action === "blocked")) continue;
          commit.forEach((h, i) => {
            if (h === undefined) return;
            const records = [...state.resources.values()].filter((r) => r.serverId === created.get(i));
            expect(records.map((r) => r.id)).toEqual([`PortalWebhook/${h.name}`]);
          });
        }
      }),
      { numRuns: runs },
    );
  }, 300_000);
});
