/**
 * Two replicas of `gatesync run` with one and the same config (docs/user/replicas.md: "as often
 * as you like") share its `source.git.cacheDir`: they start together (both clone into it), each
 * leads one of two environments following `main`, and after every push both are asked to sync
 * at the same moment, so both fetch the one clone at once. Every fetch succeeds and both
 * environments apply every commit. On the old code the replicas' clones and fetches ran into each
 * other (`cannot lock ref`, SOURCE_FETCH; a clone removed under the other's feet).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gitRemote, pushFiles } from "../helpers/git-remote.js";
import { fleetEnv, fleetHoldings, fleetStatus, key, rateIn, syncToken } from "../helpers/promotion-fleet.js";
import { testSchema } from "../helpers/postgres.js";
import { spawnReplica, untilWithLogs } from "../helpers/replica.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import { tempRepo } from "../helpers/temp-repo.js";

const holdings = fleetHoldings();
afterAll(holdings.cleanUp);

describe("replicas sharing one git cache", () => {
  it("clone and fetch the one cache at the same moments without an error, and apply every commit", async () => {
    const until = untilWithLogs(holdings.replicas);
    const [staging, qa] = [await testSandbox(), await testSandbox()];
    holdings.sandboxes.push(staging, qa);
    const dir = await tempRepo();
    const work = gitRemote(dir);
    await pushFiles(work, key(10), "acme at 10");
    const schema = testSchema();
    holdings.envSchemas.push(`${schema}_staging`, `${schema}_qa`);
    await writeFile(
      path.join(dir, "gatesync.yaml"),
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(path.join(dir, "origin.git"))}, branch: main, subdirectory: config, cacheDir: ./cache } }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }
environments:
  staging:
    targets: { gateway: { url: ${staging.urls.gateway}, credentialEnv: GW_KEY } }
  qa:
    targets: { gateway: { url: ${qa.urls.gateway}, credentialEnv: GW_KEY } }
schedule: { interval: 1h, jitter: 0 }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
`,
    );
    const replicas = ["a", "b"].map((name) => spawnReplica(name, "gatesync.yaml", dir, fleetEnv()));
    holdings.replicas.push(...replicas);
    await until(() => replicas.every((r) => r.url !== undefined), Boolean, 60_000, "for both to listen");
    await until(
      async () => Promise.all(replicas.map(async (r) => (await fleetStatus(r)).fleet.leads.length)),
      (n) => n.every((x) => x === 1),
      30_000,
      "for a 1/1 split",
    );
    await until(
      () => [rateIn(staging), rateIn(qa)],
      ([s, q]) => s === 10 && q === 10,
      60_000,
      "for the first commit in both",
    );

    for (let rate = 11; rate <= 16; rate++) {
      await pushFiles(work, key(rate), `acme at ${rate}`);
      // both environments' leaders fetch the one clone at once
      const synced = await Promise.all(
        ["staging", "qa"].map(async (env) =>
          call(`${replicas[0]!.url}/environments/${env}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } }),
        ),
      );
      expect(synced.map((r) => r.status)).toEqual([202, 202]);
      await until(
        () => [rateIn(staging), rateIn(qa)],
        ([s, q]) => s === rate && q === rate,
        30_000,
        `for acme at ${rate} in both`,
      );
    }
    for (const r of replicas) {
      expect(r.log, r.name).not.toMatch(/SOURCE_FETCH|cannot lock ref|source fetch failed/);
    }
  }, 240_000);
});
