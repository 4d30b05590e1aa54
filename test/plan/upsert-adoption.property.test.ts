/**
 * An org key's write is one upsert by its spec's own id: `gatesync.dev/adopt` with that id takes the
 * key as existing (action adopt, the upsert as the in-place update), any other id is blocked (the
 * second plan after a real apply is checked by test/import/round-trip.test.ts).
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { desiredFrom, planFor } from "../helpers/plan.js";
import { orgKey } from "../helpers/resources.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const id = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/);
const annotated = (keyId: string, adopt: string | undefined): string => {
  const file = orgKey({ name: "acme", keyId, spec: "rate: 10" });
  return adopt === undefined ? file : file.replace("  name: acme\n", `  name: acme\n  annotations:\n    gatesync.dev/adopt: "${adopt}"\n`);
};

describe("adopting an upserted OrgKey by its own id", () => {
  it("adopts exactly when the annotation gives the spec's id; creates without one; blocks any other", async () => {
    await fc.assert(
      fc.asyncProperty(id, fc.oneof(fc.constant("none"), fc.constant("same"), id), async (keyId, choice) => {
        const adopt = choice === "none" ? undefined : choice === "same" ? keyId : choice;
        const set = await desiredFrom({ "k.yaml": annotated(keyId, adopt) });
        const plan = planFor(set);
        const c = plan.changes[0]!;
        if (adopt === undefined) {
          expect([c.action, plan.summary.create]).toEqual(["create", 1]);
          return;
        }
        if (adopt !== keyId) {
          expect(c.action).toBe("blocked");
          expect(c.reason).toContain(`gives "${adopt}", but an OrgKey is written to its spec's own id "${keyId}"`);
          expect(c.hint).toContain(`gatesync.dev/adopt: "${keyId}"`);
          return;
        }
        expect([c.action, c.adopt?.serverId, c.operation?.path, plan.summary.create]).toEqual(["adopt", keyId, `/gw/org/keys/${keyId}`, 0]);
      }),
      { numRuns: 40 },
    );
  });
});
