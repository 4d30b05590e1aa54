/**
 * Identities the management calls put into their URL path (an org key's `keyId`, an API's
 * `apiId`, an OAuth client's `clientId`) are checked as path segments (issue 43): `..` planned
 * as `POST /gw/org/keys/..` was sent as `POST /gw/org/`, another route than the plan showed.
 * Each such value is a located error of validate, and nothing is sent; the HTTP client itself
 * refuses a path the URL parser would rewrite.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { BatchSender, relativeUrl } from "../../src/apply/batch/batch.js";
import { InterfaceClient, managementDispatcher } from "../../src/apply/http-client.js";
import { InterfaceQueue } from "../../src/apply/pace/queues.js";
import { GatesyncError } from "../../src/errors.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const env = { GW_KEY: testCredentials.gatewayKey, KEY_ID: ".." };
const refused = ["..", ".", "a/b", "%2e%2e", "x?y", "a#b", "a b", "a\\b", "${env:KEY_ID}"];

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(async () => {
  await sandbox.stop();
  await removeTempRepos();
});

const gatewayCalls = (): number => sandbox.inspect.calls().log.filter((c) => c.interface === "gateway").length;

async function repo(files: Record<string, string>): Promise<string> {
  const dir = await tempRepo(Object.fromEntries(Object.entries(files).map(([f, text]) => [`config/${f}`, text])));
  await writeFile(
    path.join(dir, "gatesync.yaml"),
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
state: { backend: sqlite, path: ./state/state.db }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
`,
  );
  return path.join(dir, "gatesync.yaml");
}

function gatewayClient(): InterfaceClient {
  return new InterfaceClient({
    name: "gateway",
    baseUrl: sandbox.urls.gateway,
    auth: { header: "x-gw-authorization", value: testCredentials.gatewayKey },
    dispatcher: managementDispatcher(),
    timeoutMs: 5000,
    maxResponseBytes: 1 << 20,
  });
}

describe("identities that are URL path segments", () => {
  it("refuses each key id that is not one segment, located at it, in validate and apply, sending nothing", async () => {
    const keys = refused.map((id, i) => doc("OrgKey", `k${i}`, `keyId: ${JSON.stringify(id)}\nalias: k`));
    const text = keys.join("---\n");
    const cfg = await repo({ "keys.yaml": text });
    const validate = await runCli(["validate", "-c", cfg, "--format", "json"], env);
    expect(validate.code).toBe(1);
    const found = (
      JSON.parse(validate.stdout) as { diagnostics: Array<{ code: string; file: string; line: number; column: number; path: string; message: string }> }
    ).diagnostics;
    expect(found).toHaveLength(refused.length);
    refused.forEach((id, i) => {
      const at = positionOf(text, `keyId: ${JSON.stringify(id)}`);
      expect(found[i]).toMatchObject({ code: "SCHEMA_VIOLATION", file: "keys.yaml", line: at.line, column: at.column + "keyId: ".length, path: "spec.keyId" });
      expect(found[i]!.message).toContain(
        id.startsWith("${") ? "nor `{` or `}` (a secret reference would put a secret into the URL)" : "must not be `.` or `..`, nor hold `/`",
      );
    });
    const before = gatewayCalls();
    const apply = await runCli(["apply", "-c", cfg, "--auto-approve"], env);
    expect(apply.code).toBe(1);
    expect(apply.stdout + apply.stderr).toContain("SCHEMA_VIOLATION");
    expect(gatewayCalls()).toBe(before);
  });

  it("refuses an API id and an OAuth client id the same way, and takes dots inside a segment", async () => {
    const cfg = await repo({
      "api.yaml": doc(
        "ApiDefinition",
        "p",
        'apiId: ".."\nquery: { listenPath: /p/ }\ndefinition: { openapi: 3.0.3, info: { title: P, version: "1" }, paths: {} }',
      ),
      "client.yaml": doc("OAuthClient", "c", 'apiId: petstore-v1\nclientId: "mobile/../../keys"'),
      "key.yaml": doc("OrgKey", "ok", "keyId: acme.v2...x\nalias: fine"),
    });
    const validate = await runCli(["validate", "-c", cfg, "--format", "json"], env);
    const found = (JSON.parse(validate.stdout) as { diagnostics: Array<{ code: string; file: string; path: string }> }).diagnostics;
    expect(found.filter((d) => d.code === "SCHEMA_VIOLATION").map((d) => `${d.file} ${d.path}`)).toEqual(["api.yaml spec.apiId", "client.yaml spec.clientId"]);
    expect(found.some((d) => d.file === "key.yaml")).toBe(false);
  });

  it("has the HTTP client refuse a path the URL parser would send elsewhere, before anything leaves", async () => {
    const client = gatewayClient();
    const before = gatewayCalls();
    for (const p of [
      "/gw/org/keys/..",
      "/gw/org/keys/.",
      "/gw/org/keys/%2E%2e",
      "/gw/org/keys/a\\b",
      "/gw/org/keys/a#b",
      "/gw/apis/oas/../../org/keys/x?reset_quota=1",
    ]) {
      const error = await client.call({ method: "POST", path: p, body: {} }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, p).toBeInstanceOf(GatesyncError);
      expect((error as GatesyncError).code).toBe("INTERNAL");
    }
    expect(gatewayCalls()).toBe(before);
    // encoded as the planner encodes, the same characters are one segment: sent
    const sent = await client.call({ method: "POST", path: `/gw/org/keys/${encodeURIComponent("a/..")}`, body: { rate: 1, per: 1 } });
    expect(sent.kind).toBe("answered");
    expect(gatewayCalls()).toBe(before + 1);
  });

  it("has the batch refuse a sub-request address the gateway would resolve elsewhere, sending no batch", async () => {
    const logger = pino({ level: "silent" });
    const batch = new BatchSender(
      gatewayClient(),
      new InterfaceQueue("gateway", { concurrency: 1, requestsPerSecond: 1000 }, logger),
      { listenPath: "/gw-batch/", loopbackKey: "sandbox-loopback-key", adminKey: testCredentials.gatewayKey, maxSize: 50 },
      logger,
    );
    const before = gatewayCalls();
    const items = ["fine", ".."].map((k) => ({ id: `OrgKey/${k}`, method: "POST", relativeUrl: relativeUrl(`/gw/org/keys/${k}`), body: "{}" }));
    await expect(batch.send(items)).rejects.toMatchObject({ code: "INTERNAL" });
    expect(gatewayCalls()).toBe(before);
  });
});
