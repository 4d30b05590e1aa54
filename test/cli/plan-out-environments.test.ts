/**
 * `gatesync plan --out` on a config with environments (issue 44: the merge-request job saves
 * plan.json beside its comment): every environment's plan, keyed by name. `apply --plan` takes
 * one environment's: given the file of all, it says how to save one, and that works.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let staging: SandboxHandle;
let production: SandboxHandle;

beforeAll(async () => {
  staging = await testSandbox();
  production = await testSandbox();
});

afterAll(async () => {
  await staging?.stop();
  await production?.stop();
  await removeTempRepos();
});

describe("plan --out with environments", () => {
  it("saves every environment's plan; apply --plan of it says to save one, and the one saved applies", async () => {
    const dir = await tempRepo({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: ${var:rate}") });
    const cfg = path.join(dir, "gatesync.yaml");
    await writeFile(
      cfg,
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
environments:
  staging:
    targets: { gateway: { url: ${staging.urls.gateway}, credentialEnv: GW_KEY } }
    values: { rate: 1 }
  production:
    targets: { gateway: { url: ${production.urls.gateway}, credentialEnv: GW_KEY } }
    values: { rate: 2 }
`,
    );
    const env = { GW_KEY: testCredentials.gatewayKey, NO_COLOR: "1", GATESYNC_LOG_LEVEL: "silent" };
    const all = path.join(dir, "plan.json");
    const planned = await runCli(["plan", "--config", cfg, "--out", all], env);
    expect(planned.code, planned.stderr).toBe(0);
    const saved = JSON.parse(await readFile(all, "utf8")) as { environments: Record<string, { summary: { create: number } }> };
    expect(Object.keys(saved.environments)).toEqual(["staging", "production"]);
    expect(saved.environments.production!.summary.create).toBe(1);
    const refused = await runCli(["apply", "--config", cfg, "--env", "staging", "--plan", all], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`${all} holds the plans of environments staging, production: apply takes one environment's plan`);
    expect(refused.stderr).toContain("save it with `gatesync plan --env staging --out FILE` and apply that file with the same --env");
    // the hint followed
    const one = path.join(dir, "staging.json");
    expect((await runCli(["plan", "--config", cfg, "--env", "staging", "--out", one], env)).code).toBe(0);
    const applied = await runCli(["apply", "--config", cfg, "--env", "staging", "--plan", one, "--allow-empty-state"], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect(staging.inspect.store.orgKeys.get("org-acme")?.session.rate).toBe(1);
    expect(production.inspect.store.orgKeys.get("org-acme")).toBeUndefined();
  });
});
