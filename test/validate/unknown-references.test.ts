/**
 * A reference of a scheme gatesync does not read (issue 43, point 6) is a located
 * REFERENCE_UNKNOWN error in a resource and in its attached OpenAPI file alike — never text sent
 * to the gateway as a key's HMAC secret. The hint's did-you-mean, followed, validates and sends
 * the secret; `$${` still writes a literal `${`, and shell's `${NAME:-default}` stays text.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { petstoreOpenapi } from "../helpers/petstore-openapi.js";
import { apiDefinition, doc } from "../helpers/resources.js";

const planted = "planted-hmac-secret-51c0e9ab";
const env = { GW_KEY: testCredentials.gatewayKey, TOKEN: planted };

const key = doc("OrgKey", "acme", "keyId: acme\nalias: ACME\nhmac_string: ${evn:TOKEN}");
const api = apiDefinition({ name: "petstore", apiId: "petstore-v1", listenPath: "/petstore/", spec: "definitionFile: petstore.openapi.yaml" });
const openapi = (description: string): string => petstoreOpenapi({ description });

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(async () => {
  await sandbox.stop();
  await removeTempRepos();
});

function config(): string {
  return `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
state: { backend: sqlite, path: ./state/state.db }
secrets: { env: [TOKEN] }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
`;
}

describe("references of an unknown scheme", () => {
  let dir: string;
  let cfg: string;
  beforeAll(async () => {
    dir = await tempRepo({
      "config/keys.yaml": key,
      "config/apis.yaml": api,
      "config/petstore.openapi.yaml": openapi("keys from ${vault:app#secret}"),
    });
    cfg = path.join(dir, "gatesync.yaml");
    await writeFile(cfg, config());
  });

  it("are located errors in a resource and in its attached document, with the scheme they resemble; nothing is planned or sent", async () => {
    const validate = await runCli(["validate", "-c", cfg], env);
    expect(validate.code).toBe(1);
    const inKey = positionOf(key, "${evn:TOKEN}");
    expect(validate.stdout).toContain(
      `error[REFERENCE_UNKNOWN] keys.yaml:${inKey.line}:${inKey.column} OrgKey/acme spec.hmac_string: \`\${evn:TOKEN}\` is a reference of the unknown scheme \`evn\``,
    );
    expect(validate.stdout).toContain("hint: did you mean `${env:TOKEN}`?");
    const inDocument = positionOf(openapi("keys from ${vault:app#secret}"), '"keys from');
    expect(validate.stdout).toContain(
      `error[REFERENCE_UNKNOWN] petstore.openapi.yaml:${inDocument.line}:${inDocument.column} ApiDefinition/petstore info.description: \`\${vault:app#secret}\``,
    );
    expect(validate.stdout).toContain(
      "hint: write ${env:NAME}, ${file:PATH}, ${sops:PATH#KEY.PATH} or ${var:NAME}, or write `$${vault:app#secret}` for the text itself",
    );
    const json = await runCli(["validate", "-c", cfg, "--format", "json"], env);
    const codes = (JSON.parse(json.stdout) as { diagnostics: Array<{ code: string }> }).diagnostics.map((d) => d.code);
    expect(codes.filter((c) => c === "REFERENCE_UNKNOWN")).toHaveLength(2);
    const apply = await runCli(["apply", "-c", cfg, "--auto-approve", "--allow-empty-state"], env);
    expect(apply.code).toBe(1);
    expect(apply.stdout + apply.stderr).toContain("REFERENCE_UNKNOWN");
    expect((sandbox.inspect.objects() as { orgKeys?: Array<{ keyId: string }> }).orgKeys?.some((k) => k.keyId === "acme")).toBe(false);
  });

  it("validates and sends the secret once the did-you-mean is followed, and `$${` and shell's forms as text", async () => {
    const keyFile = path.join(dir, "config/keys.yaml");
    await writeFile(keyFile, (await readFile(keyFile, "utf8")).replace("${evn:TOKEN}", "${env:TOKEN}"));
    // the hint's other way: the text itself
    await writeFile(path.join(dir, "config/petstore.openapi.yaml"), openapi("keys from $${vault:app#secret}, port ${PORT:-8080}, ${baseUrl}"));
    const validate = await runCli(["validate", "-c", cfg], env);
    expect(validate.stderr).toBe("");
    expect(validate.code).toBe(0);
    const apply = await runCli(["apply", "-c", cfg, "--auto-approve", "--allow-empty-state"], env);
    expect(apply.code).toBe(0);
    const objects = sandbox.inspect.objects() as {
      orgKeys: Array<{ keyId: string; session: { hmac_string?: unknown } }>;
      apis: Array<{ id: string; document?: { info?: { description?: unknown } } }>;
    };
    expect(objects.orgKeys.find((k) => k.keyId === "acme")?.session.hmac_string).toBe(planted);
    expect(objects.apis.find((a) => a.id === "petstore-v1")?.document?.info?.description).toBe("keys from ${vault:app#secret}, port ${PORT:-8080}, ${baseUrl}");
    expect(apply.stdout + apply.stderr).not.toContain(planted);
  });
});
