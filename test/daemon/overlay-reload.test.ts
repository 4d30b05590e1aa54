/**
 * An overlay the operator's gatesync.yaml names, edited on disk (a ConfigMap updated beside the
 * daemon, a file edited next to a directory source): picked up on SIGHUP and by the next
 * scheduled run, as a ruleset is (issue 44). Before, SIGHUP said nothing and runs were noops.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let sandbox: SandboxHandle;
let dir: string;
let daemon: Daemon;
const overlay = (rate: number): string => `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: acme }\nspec: { rate: ${rate} }\n`;
const rate = (): unknown => sandbox.inspect.store.orgKeys.get("org-acme")?.session.rate;

beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo({
    "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 5"),
    "overlays/production.yaml": overlay(50),
    "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
environments:
  production:
    targets: { gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY } }
    patches: [overlays/production.yaml]
schedule: { interval: 1h }
`,
  });
  daemon = await startDaemon({
    config: await loadConfig(path.join(dir, "gatesync.yaml")),
    env: { GW_KEY: testCredentials.gatewayKey },
    logger: silentLogger(),
    serve: false,
    watchConfig: false,
  });
  expect((await daemon.firstRun).result).toBe("applied");
  expect(rate()).toBe(50);
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await sandbox?.stop();
  await removeTempRepos();
});

describe("an overlay of the operator's file edited on disk", () => {
  it("is reloaded on SIGHUP and applied", async () => {
    await writeFile(path.join(dir, "overlays/production.yaml"), overlay(60));
    expect(await daemon.reload("SIGHUP")).toBe("reloaded");
    await eventually(rate, (r) => r === 60);
  });

  it("is applied by the next scheduled run", async () => {
    await eventually(
      () => daemon.environments.get("production")?.lastRun?.result,
      (r) => r === "applied",
    );
    await writeFile(path.join(dir, "overlays/production.yaml"), overlay(70));
    const report = await daemon.environments.get("production")!.runOnce("schedule");
    expect(report.result).toBe("applied");
    expect(rate()).toBe(70);
  });
});
