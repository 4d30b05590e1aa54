/**
 * One repository, two environments, two real sandboxes: `--env` applies to one environment's
 * gateway with its values and writes its own state; `plan` without `--env` plans both, one
 * section (markdown, text) or key (JSON) each, and a value changed in one environment shows
 * only there.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { testSandbox, testCredentials } from "../helpers/sandbox.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { doc, orgKey } from "../helpers/resources.js";

let staging: SandboxHandle;
let production: SandboxHandle;

beforeAll(async () => {
  staging = await testSandbox();
  production = await testSandbox();
});
afterAll(async () => {
  await staging.stop();
  await production.stop();
  await removeTempRepos();
});

const env = { STAGING_GW: testCredentials.gatewayKey, PROD_GW: testCredentials.gatewayKey };

function configText(stagingRate: string | number = 100): string {
  return `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
state: { backend: sqlite, path: ./state/state.db }
values: { team: storefront }
environments:
  staging:
    targets:
      gateway: { url: ${staging.urls.gateway}, credentialEnv: STAGING_GW }
    values: { key_rate: ${stagingRate}, per: 60, label: "staging key" }
  production:
    targets:
      gateway: { url: ${production.urls.gateway}, credentialEnv: PROD_GW }
    values: { key_rate: 1000, per: 60, label: "production key" }
`;
}

const acmeKey = orgKey({ name: "acme", keyId: "org-acme-env", rate: "${var:key_rate}", per: "${var:per}", spec: "alias: ${var:label} of ${var:team}" });

interface SandboxKey {
  readonly key_id?: string;
  readonly rate?: unknown;
  readonly alias?: unknown;
}

function keyIn(sandbox: SandboxHandle): SandboxKey | undefined {
  const keys = (sandbox.inspect.objects() as { orgKeys?: SandboxKey[] }).orgKeys ?? [];
  return keys.find((k) => JSON.stringify(k).includes("org-acme-env"));
}

describe("environments on the command line", () => {
  let dir: string;
  let config: string;
  beforeAll(async () => {
    dir = await tempRepo({ "config/key.yaml": acmeKey });
    config = path.join(dir, "gatesync.yaml");
    await writeFile(config, configText());
  });

  it("applies --env staging to staging's sandbox only, with staging's values typed, in staging's own state", async () => {
    const applied = await runCli(["apply", "-c", config, "--env", "staging", "--auto-approve", "--allow-empty-state"], env);
    expect(applied.stderr).not.toContain("error");
    expect(applied.code).toBe(0);
    const key = keyIn(staging);
    expect(key).toBeDefined();
    expect(JSON.stringify(key)).toContain('"rate":100');
    expect(JSON.stringify(key)).toContain("staging key of storefront");
    expect(keyIn(production)).toBeUndefined();
    const stagingPlan = await runCli(["plan", "-c", config, "--env", "staging", "--detailed-exitcode"], env);
    expect(stagingPlan.code).toBe(0);
    const productionPlan = await runCli(["plan", "-c", config, "--env", "production", "--detailed-exitcode"], env);
    expect(productionPlan.code).toBe(2);
    expect(productionPlan.stdout).toContain("Plan: 1 to create");
  });

  it("keeps both states apart: after production's apply, a re-plan of each is empty", async () => {
    expect((await runCli(["apply", "-c", config, "--env", "production", "--auto-approve", "--allow-empty-state"], env)).code).toBe(0);
    expect(JSON.stringify(keyIn(production))).toContain('"rate":1000');
    expect(JSON.stringify(keyIn(staging))).toContain('"rate":100');
    const both = await runCli(["plan", "-c", config, "--detailed-exitcode"], env);
    expect(both.code).toBe(0);
    expect(both.stdout).toContain("== environment staging ==");
    expect(both.stdout).toContain("== environment production ==");
    const list = await runCli(["state", "list", "-c", config, "--env", "production", "--json"], env);
    expect((JSON.parse(list.stdout) as { resources: unknown[] }).resources).toHaveLength(1);
  });

  it("shows a value changed in one environment in that environment's plan only, in the markdown comment and JSON", async () => {
    await writeFile(config, configText(250));
    const md = await runCli(["plan", "-c", config, "--format", "markdown", "--detailed-exitcode"], env);
    expect(md.code).toBe(2);
    const matrix = md.stdout.split("\n").filter((l) => l.startsWith("| `OrgKey/acme`"));
    expect(matrix).toEqual(["| `OrgKey/acme` | ✏️ update |  |"]);
    const stagingSection = md.stdout.slice(md.stdout.indexOf("#### Environment `staging`"), md.stdout.indexOf("#### Environment `production`"));
    expect(stagingSection).toContain("- rate: 100");
    expect(stagingSection).toContain("+ rate: 250");
    const productionSection = md.stdout.slice(md.stdout.indexOf("#### Environment `production`"));
    expect(productionSection).toContain("No changes");
    const json = await runCli(["plan", "-c", config, "--format", "json"], env);
    const plans = (JSON.parse(json.stdout) as { environments: Record<string, { summary: { update: number } }> }).environments;
    expect(Object.keys(plans)).toEqual(["staging", "production"]);
    expect(plans.staging!.summary.update).toBe(1);
    expect(plans.production!.summary.update).toBe(0);
    await writeFile(config, configText());
  });

  it("refuses an unknown --env listing the known ones, and apply without --env", async () => {
    const unknown = await runCli(["plan", "-c", config, "--env", "prod"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("CONFIG_UNKNOWN_ENVIRONMENT");
    expect(unknown.stderr).toContain("staging, production");
    const apply = await runCli(["apply", "-c", config, "--auto-approve", "--allow-empty-state"], env);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain("--env");
  });

  it("finds a reference written with escapes (a YAML double-quoted string, a JSON string) as well as one written out", async () => {
    // files without `${var:` in their text are not walked for references: an escape must still count
    const yaml = doc("OrgKey", "beta", 'keyId: org-beta\nrate: "\\u0024{var:beta_rate}"');
    const json = JSON.stringify({
      apiVersion: "gatesync.dev/v1",
      kind: "OrgKey",
      metadata: { name: "gamma" },
      spec: { keyId: "org-gamma", rate: "\\u0024{var:gamma_rate}" },
    })
      // JSON.stringify wrote the backslash escaped: put the escape itself in the file
      .replace("\\\\u0024", "\\u0024");
    const d = await tempRepo({ "config/beta.yaml": yaml, "config/gamma.json": json, "config/plain.yaml": doc("OrgKey", "plain", "keyId: org-plain\nrate: 7") });
    await writeFile(path.join(d, "gatesync.yaml"), configText());
    const r = await runCli(["validate", "-c", path.join(d, "gatesync.yaml"), "--env", "staging"], env);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/VALUE_MISSING\] beta\.yaml:\d+:\d+ .*\$\{var:beta_rate\} has no value in environment staging/);
    expect(r.stdout + r.stderr).toMatch(/VALUE_MISSING\] gamma\.json:\d+:\d+ .*\$\{var:gamma_rate\} has no value in environment staging/);
    expect(r.stdout + r.stderr).not.toContain("plain.yaml");
  });

  it("reports a value missing in one environment where it is used, naming the environment and the variable", async () => {
    const text = doc("OrgKey", "beta", "keyId: org-beta\nrate: ${var:beta_rate}");
    const d = await tempRepo({ "config/key.yaml": text });
    await writeFile(path.join(d, "gatesync.yaml"), configText().replace("values: { key_rate: 1000,", "values: { beta_rate: 5, key_rate: 1000,"));
    const r = await runCli(["validate", "-c", path.join(d, "gatesync.yaml")], env);
    expect(r.code).toBe(1);
    const at = positionOf(text, "${var:beta_rate}");
    expect(r.stdout + r.stderr).toContain(`key.yaml:${at.line}:${at.column}`);
    expect(r.stdout + r.stderr).toMatch(/VALUE_MISSING.*\$\{var:beta_rate\} has no value in environment staging/);
    expect(r.stdout + r.stderr).not.toMatch(/has no value in environment production/);
    // the reference left in the value's place is not reported again as a schema error
    expect(r.stdout + r.stderr).not.toContain("SCHEMA_VIOLATION");
    expect(r.stdout + r.stderr).toMatch(/VALUE_UNUSED.*key_rate of environment staging/);
    const one = await runCli(["validate", "-c", path.join(d, "gatesync.yaml"), "--env", "production"], env);
    expect(one.code).toBe(0);
    // the worst environment decides the exit code; the other is still planned
    const md = await runCli(["plan", "-c", path.join(d, "gatesync.yaml"), "--format", "markdown", "--detailed-exitcode"], env);
    expect(md.code).toBe(1);
    expect(md.stdout).toContain("- `staging`: **not planned**");
    expect(md.stdout).toMatch(/#### Environment `staging`\n\n\*\*Not planned: 1 error/);
    expect(md.stdout).toContain("- `production`: 1 to create");
    expect(md.stderr).toContain("[staging] error[VALUE_MISSING]");
  });

  it("leaves a config without environments as it was: one plan, no sections, values from the top level", async () => {
    const d = await tempRepo({ "config/key.yaml": acmeKey });
    const single = path.join(d, "gatesync.yaml");
    await writeFile(
      single,
      `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\nstate: { backend: sqlite, path: ./state/state.db }\ntargets:\n  gateway: { url: ${staging.urls.gateway}, credentialEnv: STAGING_GW }\nvalues: { key_rate: 7, per: 1, label: one, team: t }\n`,
    );
    const text = await runCli(["plan", "-c", single], env);
    expect(text.stdout).not.toContain("== environment");
    expect(text.stdout).toContain("Plan: 1 to create");
    const json = JSON.parse((await runCli(["plan", "-c", single, "--format", "json"], env)).stdout) as Record<string, unknown>;
    expect(json).not.toHaveProperty("environments");
    expect(JSON.stringify(json)).toContain('"path":"rate","op":"add","after":7');
    const md = await runCli(["plan", "-c", single, "--format", "markdown"], env);
    expect(md.stdout).toMatch(/^### gatesync plan\n\n\*\*1 to create/);
    const named = await runCli(["plan", "-c", single, "--env", "default", "--format", "json"], env);
    const withoutTime = (t: string): string => t.replace(/"createdAt": "[^"]+"/, "");
    expect(withoutTime(named.stdout)).toBe(withoutTime((await runCli(["plan", "-c", single, "--format", "json"], env)).stdout));
  });

  it("keeps the other environments' credentials out of an environment's secret scope, even when listed", async () => {
    const text = doc("OrgKey", "leak", "keyId: org-leak\nrate: 1\nhmac_enabled: true\nhmac_string: ${env:PROD_GW}");
    const d = await tempRepo({ "config/key.yaml": text });
    await writeFile(
      path.join(d, "gatesync.yaml"),
      configText().replace("    values: { key_rate: 100,", "    secrets: { env: [PROD_GW] }\n    values: { key_rate: 100,"),
    );
    const r = await runCli(["plan", "-c", path.join(d, "gatesync.yaml"), "--env", "staging"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/SECRET_SCOPE.*\$\{env:PROD_GW\} reads gatesync's own credential \(environment production: targets\.gateway\.credentialEnv\)/);
    expect(r.stderr).not.toContain(testCredentials.gatewayKey);
  });
});
