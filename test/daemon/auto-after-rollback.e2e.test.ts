/**
 * `promotion: auto` after a rollback (docs/user/promotion.md), against a real `gatesync run`
 * process over a real git repository: production is rolled back from v2; staging then verifies v2
 * again (main force-pushed back to v1 and forward to v2, as a team undoing and redoing a merge
 * does) — the daemon's own decisions do not take v2 back; a newer verified revision (v3) is still
 * promoted by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { git } from "../helpers/git-repo.js";
import { acmeKey, acmeRate, pagesReader, promotionProcess, untilAcmeRate } from "../helpers/promotion-daemon.js";
import { call } from "../helpers/sandbox.js";
import type { PromotionProcess } from "../helpers/promotion-daemon.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

interface HistoryJson {
  promotions: Array<{ revision: string; rollback: boolean }>;
  verifications: Array<{ revision: string }>;
}

let d: PromotionProcess;
const history = async (env: string): Promise<HistoryJson> => {
  const out = await d.cli(["history", "--env", env, "--format", "json"]);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as HistoryJson;
};
/** When production's newest run started, as its status page says (the empty string: none yet). */
const productionStartedAt = async (): Promise<string> => {
  const status = await call(`${d.daemon.url}/environments/production/status`, pagesReader);
  return (status.body as { lastRun?: { startedAt?: string } | null }).lastRun?.startedAt ?? "";
};
const verifiedTimes = async (revision: string): Promise<number> => (await history("staging")).verifications.filter((v) => v.revision === revision).length;

/** Moves origin's main to `revision` (forced) and syncs; waits until staging applied `r`. */
async function mainAt(revision: string, r: number): Promise<void> {
  git(d.work, "reset", "-q", "--hard", revision);
  git(d.work, "push", "-q", "-f", "origin", "main");
  await d.sync();
  await untilAcmeRate(d, "staging", r, 30_000);
}

beforeAll(async () => {
  d = await promotionProcess(acmeKey(10), "2s", "auto");
}, 60_000);

afterAll(async () => {
  await d?.stop();
  await removeTempRepos();
});

describe("promotion: auto after a rollback", () => {
  it("does not take back the revision production was rolled back from, even verified again; a newer one it promotes", async () => {
    const v1 = git(d.work, "rev-parse", "HEAD");
    await untilAcmeRate(d, "production", 10, 30_000);
    const v2 = await d.push(acmeKey(20), "acme at 20");
    await d.sync();
    await untilAcmeRate(d, "production", 20, 30_000);
    const back = await d.cli(["rollback", "production", "--steps", "1", "--auto-approve"]);
    expect(back.code, back.stderr).toBe(0);
    await untilAcmeRate(d, "production", 10, 30_000);
    // staging verifies v2 a second time, after the rollback: a candidate newer than the promotion in force
    await mainAt(v1, 10);
    await mainAt(v2, 20);
    await eventually(
      () => verifiedTimes(v2),
      (n) => n >= 2,
      30_000,
    );
    // production's next decisions (each sync asks): each waited for until production ran after it, so
    // the assertions below follow three decisions made with v2 verified again (not a sleep that may end before one)
    for (let i = 0; i < 3; i++) {
      const asked = new Date().toISOString();
      await d.sync();
      await eventually(productionStartedAt, (at) => at > asked, 30_000);
    }
    expect(acmeRate(d, "production")).toBe(10);
    expect((await history("production")).promotions[0]).toMatchObject({ revision: v1, rollback: true });
    // a newer verified revision is still promoted by the daemon itself
    const v3 = await d.push(acmeKey(30), "acme at 30");
    await d.sync();
    await untilAcmeRate(d, "production", 30, 30_000);
    const promotions = (await history("production")).promotions.map((p) => [p.revision, p.rollback]);
    expect(promotions).toEqual([
      [v3, false],
      [v1, true],
      [v2, false],
      [v1, false],
    ]);
  }, 180_000);
});
