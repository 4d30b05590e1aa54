/**
 * `promotion: auto` in a fleet (docs/user/promotion.md, docs/user/fleets.md): two replicas of
 * `gatesync run` (real processes) on one PostgreSQL database, a real git repository, staging and
 * production (promoted from staging, `promotion: auto`) led by different replicas, one sandbox
 * each, and an hourly schedule. A commit pushed and synced reaches staging; when staging's leader
 * verifies it (after a 1s soak) it wakes production's leader on the other replica through the
 * fleet's relay, so production applies it within seconds — the schedule would take an hour — and
 * `gatesync history` shows an automatic promotion.
 */
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { pushFiles } from "../helpers/git-remote.js";
import { fleetEnv, fleetHoldings, fleetStatus, key, rateIn, startPromotionFleet, syncToken } from "../helpers/promotion-fleet.js";
import type { HistoryJson } from "../helpers/promotion-fleet.js";
import { listening, untilWithLogs } from "../helpers/replica.js";
import { call } from "../helpers/sandbox.js";

const { replicas, sandboxes, envSchemas, cleanUp } = fleetHoldings();
afterAll(cleanUp);

const until = untilWithLogs(replicas);
/** Well below the hourly interval: only the wake-up from staging's leader can explain an apply this soon. */
const wakeBoundMs = 20_000;

describe("promotion: auto in a fleet whose replicas lead staging and production apart", () => {
  it("production's leader on the other replica applies a revision staging verified within seconds, as an automatic promotion", async () => {
    const { staging, production, dir, work, a, b, leader, other } = await startPromotionFleet(
      { promotion: "auto", interval: "1h" },
      { replicas, sandboxes, envSchemas },
    );
    expect((await fleetStatus(other)).fleet.leads).toEqual(["staging"]);
    expect((await fleetStatus(leader)).fleet.leads).toEqual(["production"]);
    // both replicas hear the relay before anything is asked of it
    await until(() => [a, b].every(listening), Boolean, 30_000, "for both replicas to listen for triggers");
    await until(
      () => rateIn(staging),
      (r) => r === 10,
      30_000,
      "for staging's first apply",
    );
    // the first revision's soak and whatever it brings production are over before the second commit
    await sleep(4_000);

    const second = await pushFiles(work, key(20), "acme at 20");
    const synced = await call(`${other.url}/environments/staging/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
    expect(synced.status).toBe(202);
    const asked = Date.now();
    await until(
      () => rateIn(staging),
      (r) => r === 20,
      30_000,
      "for staging to apply the second commit",
    );
    expect(rateIn(production)).not.toBe(20);
    await until(
      () => rateIn(production),
      (r) => r === 20,
      wakeBoundMs,
      "for production's leader to be woken by staging's verification",
    );
    expect(Date.now() - asked).toBeLessThan(wakeBoundMs);

    const json = await runCli(["history", "-c", path.join(dir, "a.yaml"), "--env", "production", "--format", "json"], fleetEnv());
    expect(json.code, json.stderr).toBe(0);
    const history = JSON.parse(json.stdout) as HistoryJson;
    expect(history.promotions.find((p) => p.revision === second)).toMatchObject({ revision: second, from: "staging", rollback: false, actor: { by: "auto" } });
    // the run that applied it was production's leader's, not staging's
    const applied = history.runs.filter((r) => r.outcome === "applied" && r.commit === second);
    expect(applied).toHaveLength(1);
    expect(applied[0]!.replica).toContain(String(leader.child.pid));
    expect((await fleetStatus(leader)).fleet.leads).toEqual(["production"]);
  }, 180_000);
});
