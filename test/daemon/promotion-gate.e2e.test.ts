/**
 * The gate judges what production will get (docs/user/promotion.md), end to end: a daemon over a
 * real git repository and two sandboxes. A commit whose team settings narrow staging's selection
 * leaves its own change out of staging: staging applies nothing of it and verifies it, yet
 * production is refused it — by a person's promotion and by `promotion: auto` alike — naming the
 * resource staging never ran. A commit after it that staging runs in full is promoted.
 */
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { promotionDaemon } from "../helpers/promotion-daemon.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

const key = (name: string, team: string, rate: number): string =>
  `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata:\n  name: ${name}\n  labels: { team: ${team} }\nspec:\n  keyId: org-${name}\n  rate: ${rate}\n`;
const keys = (acmeRate: number): Record<string, string> => ({ "config/keys.yaml": `${key("acme", "payments", acmeRate)}---\n${key("globex", "web", 5)}` });

/** The repository's gatesync.yaml: the team narrows staging to team=web (`selector` is the team's). */
const narrowing = (selector: string | undefined): Record<string, string> => ({
  "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
environments:
  staging:
${selector === undefined ? "    values: {}" : `    selector: ${JSON.stringify(selector)}`}
  production:
    values: {}
`,
});

const rateIn = (d: PromotionDaemon, where: "staging" | "production", name: string): unknown => d[where].inspect.store.orgKeys.get(`org-${name}`)?.session.rate;
const errorOf = (body: unknown): string => (body as { error?: string }).error ?? "";

interface Verification {
  verified: Array<{ revision: string }>;
}
/** Staging's standing verifications, as /environments/staging/status says them. */
const verifiedIn = async (d: PromotionDaemon): Promise<string[]> => {
  const body = (await call(`${d.daemon.url}/environments/staging/status`)).body as { verification?: Verification };
  return (body.verification?.verified ?? []).map((v) => v.revision);
};

let manual: PromotionDaemon | undefined;
let auto: PromotionDaemon | undefined;

afterAll(async () => {
  await manual?.stop();
  await auto?.stop();
  await removeTempRepos();
});

describe("a commit that narrows staging's selection", () => {
  it("is refused for promotion, naming what staging left out; production keeps its values", async () => {
    manual = await promotionDaemon({ ...keys(10), ...narrowing(undefined) });
    const d = manual;
    const first = await eventually(
      () => d.promote({ dryRun: true }),
      (a) => a.status === 200,
    );
    expect((await d.promote({ revision: (first.body as { revision: string }).revision })).status).toBe(202);
    await eventually(
      () => rateIn(d, "production", "acme"),
      (r) => r === 10,
    );

    const second = await d.push({ ...keys(20), ...narrowing("team=web") }, "narrow staging to team=web, raise acme's rate");
    await d.sync();
    // staging runs the commit (nothing of acme: outside its selection) and verifies it
    await eventually(
      () => verifiedIn(d),
      (v) => v.includes(second),
    );
    expect(rateIn(d, "staging", "acme")).toBe(10);
    const refused = await d.promote({ revision: second });
    expect(refused.status).toBe(409);
    const short = second.slice(0, 12);
    expect(errorOf(refused.body)).toBe(
      `production cannot take ${short}: OrgKey/acme was outside staging's selection at ${short} (staging did not apply and check what ${short} changes here)`,
    );
    expect((refused.body as { hint?: string }).hint).toContain("gatesync history --env staging");
    // the dry run says the same, and nothing reached production
    const dry = await d.promote({ revision: second, dryRun: true });
    expect(dry.status).toBe(409);
    expect(errorOf(dry.body)).toContain("OrgKey/acme was outside staging's selection");
    expect(rateIn(d, "production", "acme")).toBe(10);

    // the next commit staging runs in full is promoted: acme's new rate reaches production
    const third = await d.push({ ...keys(20), ...narrowing(undefined) }, "staging runs every team again");
    await d.sync();
    await eventually(
      () => rateIn(d, "staging", "acme"),
      (r) => r === 20,
    );
    await eventually(
      () => d.promote({ revision: third }),
      (a) => a.status === 202,
    );
    await eventually(
      () => rateIn(d, "production", "acme"),
      (r) => r === 20,
    );
  }, 120_000);

  it("is not promoted by promotion: auto either", async () => {
    auto = await promotionDaemon({ ...keys(30), ...narrowing(undefined) }, "auto");
    const d = auto;
    await eventually(
      () => rateIn(d, "production", "acme"),
      (r) => r === 30,
    );
    const second = await d.push({ ...keys(40), ...narrowing("team=web") }, "narrow staging, raise acme's rate");
    await d.sync();
    await eventually(
      () => verifiedIn(d),
      (v) => v.includes(second),
    );
    // production's runs after the verification: each judges the candidate and leaves it
    const production = d.daemon.environments.get("production")!;
    await production.runOnce("test");
    await production.runOnce("test");
    expect(rateIn(d, "production", "acme")).toBe(30);
    expect(production.lastRun?.commit).not.toBe(second);
    const refused = await d.promote({ revision: second, dryRun: true });
    expect(errorOf(refused.body)).toContain("OrgKey/acme was outside staging's selection");
  }, 120_000);
});
