/**
 * examples/environments as its comments tell a user to run it: staging and production against
 * two sandboxes, each environment with its values (typed, in the attached OpenAPI document
 * too) and production's overlay patches.
 */
import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let staging: SandboxHandle;
let production: SandboxHandle;
let config: string;
const env = { GW_ADMIN_KEY: testCredentials.gatewayKey };

beforeAll(async () => {
  staging = await testSandbox();
  production = await testSandbox();
  const dir = await tempRepo();
  await cp(path.join(projectRoot, "examples/environments"), dir, { recursive: true });
  config = path.join(dir, "gatesync.yaml");
  // the example's addresses, pointed at this test's sandboxes; the state kept in the temp directory
  const text = (await readFile(config, "utf8"))
    .replace("http://127.0.0.1:8081", staging.urls.gateway)
    .replace("http://127.0.0.1:8082", production.urls.gateway)
    .replace("path: ../../.gatesync/environments.db", "path: ./state/environments.db");
  await writeFile(config, text);
});
afterAll(async () => {
  await staging.stop();
  await production.stop();
  await removeTempRepos();
});

type Api = { readonly upstream?: string; readonly flags?: { readonly mockResponse?: boolean }; readonly definition?: unknown };

describe("examples/environments", () => {
  it("validates in both environments without a finding", async () => {
    const r = await runCli(["validate", "-c", config], env);
    expect(r.stdout).not.toMatch(/warning|error/);
    expect(r.code).toBe(0);
  });

  it("applies each environment to its own sandbox with its own values and patches", async () => {
    for (const e of ["staging", "production"]) {
      const r = await runCli(["apply", "-c", config, "--env", e, "--auto-approve", "--allow-empty-state"], env);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    }
    const api = (s: SandboxHandle): Api => s.inspect.store.apis.get("petstore-v1") as Api;
    expect(JSON.stringify(api(staging))).toContain("petstore.staging.internal");
    expect(JSON.stringify(api(staging))).toContain("https://staging.api.example.com/petstore");
    expect(JSON.stringify(api(production))).toContain("https://api.example.com/petstore");
    expect(JSON.stringify(api(production))).not.toContain("staging");
    expect(api(staging).flags?.mockResponse).toBe(true);
    expect(api(production).flags?.mockResponse).toBe(false);
    const keys = (s: SandboxHandle): string => JSON.stringify((s.inspect.objects() as { orgKeys?: unknown[] }).orgKeys);
    expect(keys(staging)).toContain("qa-robot");
    expect(keys(production)).not.toContain("qa-robot");
    expect(keys(production)).toContain('"quota_max":1000000');
    const again = await runCli(["plan", "-c", config, "--detailed-exitcode"], env);
    expect(again.code).toBe(0);
  });
});
