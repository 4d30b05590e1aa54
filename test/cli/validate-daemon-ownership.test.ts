/**
 * `validate --state-url` reads the daemon's ownership registry (`GET …/ownership`). The answer is
 * a server's, and its worst values — text that is not JSON, a body nested a million deep (which
 * JSON.parse accepts and the first JSON.stringify of a row's field overflows on), rows of the
 * wrong shape — leave the registry unread with a located warning, never a crash: the rest of
 * the repository is validated, and a well-formed row still refuses the other team's object.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const gateway = "http://127.0.0.1:1";
const settings = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets: { gateway: { url: "${gateway}", credentialEnv: GW_KEY } }
owner: billing
environments:
  staging: {}
`;
const entry = { name: "staging", orphans: "report", owner: "billing", deactivationGuard: { maxShare: 0.5, allow: false } };

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
  await removeTempRepos();
});

/** A daemon answering `/config` as gatesync does and its ownership registry with `body`. */
async function daemonAnswering(body: string): Promise<string> {
  server = createServer((req, res) => {
    const known = req.url === "/config" || req.url === "/environments/staging/ownership";
    res.writeHead(known ? 200 : 404, { "content-type": "application/json" });
    res.end(req.url === "/config" ? JSON.stringify({ implicit: false, environments: [entry] }) : known ? body : "{}");
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function validateAgainst(body: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const url = await daemonAnswering(body);
  const dir = await tempRepo({ "gatesync.yaml": settings, "config/acme.yaml": doc("OrgKey", "acme", "keyId: acme\nrate: 5") });
  return runCli(["validate", "-c", path.join(dir, "gatesync.yaml"), "--state-url", url], { GW_KEY: "k", GATESYNC_STATE_TOKEN: "t" });
}

const row = (fields: Record<string, unknown>): Record<string, unknown> => ({
  interface: "gateway",
  url: gateway,
  object: "org-key:acme",
  owner: "payments",
  environment: "payments-prod",
  resource: "OrgKey/acme",
  claimedAt: "2026-12-02T00:00:00Z",
  ...fields,
});

describe("validate against the daemon's ownership answer", () => {
  it("refuses the other team's object from a well-formed answer, at its file", async () => {
    const r = await validateAgainst(JSON.stringify({ rows: [row({})] }));
    expect(r.stdout).toContain("error[OWNED_ELSEWHERE] acme.yaml:1:1: OrgKey/acme");
    expect(r.stdout).toContain("is owned by team payments (environment payments-prod)");
    expect(r.code).toBe(1);
  });

  it.each([
    ["text that is not JSON", "<html>proxy error</html>"],
    ["rows that are not a list", JSON.stringify({ rows: "all of them" })],
    ["a body nested a million deep in a row's field", `{"rows":[{"object":${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}}]}`],
  ])("leaves the registry unread with a located warning on %s, and validates the rest", async (_what, body) => {
    const r = await validateAgainst(body);
    expect(r.stderr).not.toContain("Maximum call stack");
    expect(r.stdout).toContain("the ownership registry was not read, so objects other teams own were not checked");
    expect(r.stdout).toContain("the answer is not gatesync's …/ownership");
    expect(r.stdout).not.toContain("OWNED_ELSEWHERE");
    expect(r.code).toBe(0);
  });

  it("skips a row of the wrong shape and keeps the well-formed one", async () => {
    const r = await validateAgainst(JSON.stringify({ rows: [null, 7, row({ owner: ["payments"] }), row({ object: "org-key:other" }), row({})] }));
    expect(r.stdout.match(/OWNED_ELSEWHERE/g)).toHaveLength(1);
    expect(r.code).toBe(1);
  });
});
