/**
 * An environment's value is text, never a reference (issue 43, point 7): a value `${env:X}`
 * put in by `${var:}` — in a resource and in its attached OpenAPI file — reaches the gateway as
 * the text `${env:X}`, the plan shows that text, and the variable's value appears nowhere:
 * not in validate, plan (text, JSON, markdown), apply or `run --once` output, not in the
 * state's files, not in what the sandbox received. So are `${file:}`, `${sops:}`, `${var:}`
 * (not expanded again) and `$${…}` in values.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import type { CliResult } from "../helpers/cli.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { petstoreOpenapi } from "../helpers/petstore-openapi.js";
import { apiDefinition, doc } from "../helpers/resources.js";

const plantedEnv = "planted-env-secret-7f3a9c2e41";
const plantedFile = "planted-file-secret-88d1e0b2c4";
const env = { GW_KEY: testCredentials.gatewayKey, CRM_HOOK_TOKEN: plantedEnv };

/** Each value, and the text the gateway must receive for it. */
const values: Record<string, string> = {
  env_ref: "${env:CRM_HOOK_TOKEN}",
  file_ref: "${file:token.txt}",
  sops_ref: "${sops:app.enc.yaml#secret}",
  var_ref: "${var:env_ref}",
  escaped: "$${env:CRM_HOOK_TOKEN}",
  typo: "${evn:CRM_HOOK_TOKEN}",
};

const yamlString = (s: string): string => JSON.stringify(s);

function config(sandbox: SandboxHandle, stateDir: string): string {
  return `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
state: { backend: sqlite, path: ./${stateDir}/state.db }
secrets: { env: [CRM_HOOK_TOKEN], fileRoot: ./secrets }
values:
${Object.entries(values)
  .map(([k, v]) => `  ${k}: ${yamlString(v)}`)
  .join("\n")}
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
`;
}

/** One org key per value: the value alone (typed as the value), and inside a longer string. */
const keys = Object.keys(values)
  .map((name) =>
    doc("OrgKey", `k-${name.replaceAll("_", "-")}`, `keyId: k-${name.replaceAll("_", "-")}\nalias: \${var:${name}}\nmeta_data: { label: "[\${var:${name}}]" }`),
  )
  .join("---\n");

const api = apiDefinition({ name: "petstore", apiId: "petstore-v1", listenPath: "/petstore/", spec: "definitionFile: ../openapi/petstore.yaml" });
const openapi = petstoreOpenapi({
  title: "Petstore ${var:env_ref}",
  description: "file ${var:file_ref} sops ${var:sops_ref} var ${var:var_ref} escaped ${var:escaped} typo ${var:typo}",
});

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(async () => {
  await sandbox.stop();
  await removeTempRepos();
});

interface SandboxKey {
  readonly keyId: string;
  readonly session: { alias?: unknown; meta_data?: { label?: unknown } };
}

function keyOf(name: string): SandboxKey | undefined {
  const keys = (sandbox.inspect.objects() as { orgKeys?: SandboxKey[] }).orgKeys ?? [];
  return keys.find((k) => k.keyId === `k-${name.replaceAll("_", "-")}`);
}

async function stateFiles(dir: string): Promise<string> {
  const files = await readdir(dir);
  return (await Promise.all(files.map((f) => readFile(path.join(dir, f), "latin1")))).join("\n");
}

describe("a value is never read as a reference", () => {
  let dir: string;
  const outputs: CliResult[] = [];
  beforeAll(async () => {
    dir = await tempRepo({
      "config/keys.yaml": keys,
      "config/apis/petstore.yaml": api,
      "config/openapi/petstore.yaml": openapi,
      "secrets/token.txt": plantedFile,
    });
    await writeFile(path.join(dir, "gatesync.yaml"), config(sandbox, "state"));
  });

  it("validates, plans the values' texts as plain fields, and applies them to the gateway as written", async () => {
    const cfg = path.join(dir, "gatesync.yaml");
    const validate = await runCli(["validate", "-c", cfg], env);
    outputs.push(validate);
    expect(validate.stderr).toBe("");
    expect(validate.code).toBe(0);
    const json = await runCli(["plan", "-c", cfg, "--format", "json"], env);
    outputs.push(json);
    expect(json.code).toBe(0);
    const plan = JSON.parse(json.stdout) as { changes: Array<{ id: string; fields: Array<{ path: string; after: unknown }> }> };
    for (const [name, value] of Object.entries(values)) {
      const fields = plan.changes.find((c) => c.id === `OrgKey/k-${name.replaceAll("_", "-")}`)!.fields;
      // shown as what is sent: the text, not `(sensitive)`
      expect(fields.find((f) => f.path === "alias")?.after).toBe(value);
    }
    for (const format of ["text", "markdown"]) {
      const shown = await runCli(["plan", "-c", cfg, "--format", format], env);
      outputs.push(shown);
      expect(shown.stdout).toContain("${env:CRM_HOOK_TOKEN}");
      expect(shown.stdout).not.toContain("sensitive");
    }
    const apply = await runCli(["apply", "-c", cfg, "--auto-approve", "--allow-empty-state"], env);
    outputs.push(apply);
    expect(apply.code).toBe(0);
    for (const [name, value] of Object.entries(values)) {
      const key = keyOf(name);
      expect(key?.session.alias).toBe(value);
      expect(key?.session.meta_data?.label).toBe(`[${value}]`);
    }
    const pets = (sandbox.inspect.objects() as { apis: Array<{ id: string; document?: { info?: { title?: unknown; description?: unknown } } }> }).apis.find(
      (a) => a.id === "petstore-v1",
    );
    expect(pets?.document?.info?.title).toBe("Petstore ${env:CRM_HOOK_TOKEN}");
    expect(pets?.document?.info?.description).toBe(
      "file ${file:token.txt} sops ${sops:app.enc.yaml#secret} var ${var:env_ref} escaped $${env:CRM_HOOK_TOKEN} typo ${evn:CRM_HOOK_TOKEN}",
    );
    const again = await runCli(["plan", "-c", cfg, "--detailed-exitcode"], env);
    outputs.push(again);
    expect(again.code).toBe(0);
  });

  it("sends the same texts from the daemon's run (`run --once`, its own state)", async () => {
    await writeFile(path.join(dir, "gatesync.yaml"), config(sandbox, "daemon-state"));
    sandbox.inspect.reset();
    // a process of its own: its logs (at debug) are among the outputs searched below
    const run = await spawnCli(["run", "-c", path.join(dir, "gatesync.yaml"), "--once"], { env: { ...env, GATESYNC_LOG_LEVEL: "debug" } });
    outputs.push(run);
    expect(run.code).toBe(0);
    expect(run.stdout + run.stderr).toContain('"msg":"run finished"');
    for (const [name, value] of Object.entries(values)) expect(keyOf(name)?.session.alias).toBe(value);
  });

  it("leaves neither secret's value in any output, state file or anything the gateway holds", async () => {
    const everything = [
      ...outputs.flatMap((o) => [o.stdout, o.stderr]),
      await stateFiles(path.join(dir, "state")),
      await stateFiles(path.join(dir, "daemon-state")),
      JSON.stringify(sandbox.inspect.objects()),
    ].join("\n");
    expect(outputs.length).toBeGreaterThanOrEqual(6);
    expect(everything).toContain("${env:CRM_HOOK_TOKEN}");
    expect(everything.split(plantedEnv).length - 1).toBe(0);
    expect(everything.split(plantedFile).length - 1).toBe(0);
  });
});
