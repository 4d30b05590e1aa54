/**
 * The batch route is the operator's (issue 43, point 8): batched gateway calls carry the admin
 * key through the loopback API that `targets.gateway.batch` names, and the gateway forwards them
 * to that API's upstream. A commit that addresses the loopback API — by its id, by a listen path
 * at or beneath the route's, written out, through a `${var:}` value or an environment's overlay
 * patch — is refused, located, before any call: a second listener (the host such a commit would
 * name) receives nothing. And a batch answer that is not the gateway's is never taken for
 * "applied": the next plan still shows the change.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness, throughProxy } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import type { MisbehavingProxy } from "../helpers/misbehaving-proxy.js";
import { doc } from "../helpers/plan.js";
import type { Receiver } from "../helpers/receiver.js";
import { startReceiver } from "../helpers/receiver.js";
import { testCredentials } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
let other: Receiver | undefined;
let proxy: MisbehavingProxy | undefined;
afterEach(async () => {
  await proxy?.stop();
  await h?.stop();
  await other?.stop();
  h = other = proxy = undefined;
});

const quiet = { GATESYNC_LOG_LEVEL: "silent" };

/** The orders API pointed at `upstream` (`extra`: more of its query), and an OAuth client of it: a second wave, batched after the first. */
function ordersAt(upstream: string, query: string): Record<string, string> {
  return {
    "apis/orders.yaml": doc(
      "ApiDefinition",
      "orders",
      `apiId: orders-api\nquery: { upstreamURL: "${upstream}", ${query} }\ndefinition:\n  openapi: 3.1.0\n  info: { title: Orders, version: "1" }\n  servers: [{ url: "${upstream}" }]\n  paths: {}`,
    ),
    "gateway/client.yaml": doc("OAuthClient", "backoffice", "apiRef: orders\nclientId: orders-backoffice\npolicy_id: backoffice"),
  };
}

/** What the other host got: nothing at all, and so no admin key in a header or a body. */
function expectNothingReceived(): void {
  expect(other!.received.filter((r) => r.headers["x-gw-authorization"] !== undefined || r.body.includes(testCredentials.gatewayKey))).toEqual([]);
  expect(other!.received).toEqual([]);
}

async function applyCli(extra: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(["apply", "--config", path.join(h!.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state", ...extra], { ...h!.env, ...quiet });
}

describe("a commit addressing the batch route's loopback API", () => {
  it("by its id (targets.gateway.batch.apiId): refused at its apiId, before any call", async () => {
    other = await startReceiver();
    h = await harness({ files: ordersAt(other.url, "listenPath: /orders/") });
    await writeFile(
      path.join(h.dir, "config/apis/loopback.yaml"),
      doc(
        "ApiDefinition",
        "loopback",
        `apiId: gw-loopback\nquery: { upstreamURL: "${other.url}" }\ndefinition:\n  openapi: 3.1.0\n  info: { title: L, version: "1" }\n  paths: {}`,
      ),
    );
    const r = await applyCli();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error\[BATCH_ROUTE_RESERVED\] apis\/loopback\.yaml:6:10 ApiDefinition\/loopback spec\.apiId: addresses the batch route/);
    expect(r.stderr).toContain('addresses the batch route: apiId "gw-loopback" is the batch route\'s loopback API (targets.gateway.batch.apiId)');
    expect(r.stderr).toContain("remove this resource or give it another API and listen path");
    expect(h.sandbox.inspect.calls().log).toEqual([]);
    expectNothingReceived();
    // the hint followed: without the resource, the rest applies, batched through the untouched route
    await rm(path.join(h.dir, "config/apis/loopback.yaml"));
    const again = await applyCli();
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Calls: gateway \d+ \(2 batch calls carrying 2 changes\)/);
    expectNothingReceived();
  });

  it("by a listen path beneath the route's (the gateway's longest match would hand it the batch calls): refused, nothing sent", async () => {
    other = await startReceiver();
    h = await harness({ files: ordersAt(other.url, "listenPath: /gw-batch/gw/") });
    const r = await applyCli();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /error\[BATCH_ROUTE_RESERVED\] apis\/orders\.yaml:7:63 ApiDefinition\/orders spec\.query\.listenPath: .*listen path "\/gw-batch\/gw\/" lies beneath the batch route's \(targets\.gateway\.batch\.listenPath "\/gw-batch\/"\)/,
    );
    expect(h.sandbox.inspect.calls().log).toEqual([]);
    expectNothingReceived();
  });

  it("through a ${var:} value: refused at the field the value fills", async () => {
    other = await startReceiver();
    h = await harness({ files: ordersAt(other.url, 'listenPath: "${var:ORDERS_PATH}"'), configExtra: "values: { ORDERS_PATH: /gw-batch }\n" });
    const r = await applyCli();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /error\[BATCH_ROUTE_RESERVED\] apis\/orders\.yaml:7:63 ApiDefinition\/orders spec\.query\.listenPath: .*listen path "\/gw-batch" is the batch route's/,
    );
    expect(h.sandbox.inspect.calls().log).toEqual([]);
    expectNothingReceived();
  });

  it("through a secret reference, which nothing can check before the apply resolves it: refused at the field", async () => {
    other = await startReceiver();
    h = await harness({ files: ordersAt(other.url, 'listenPath: "${env:CRM_HOOK_TOKEN}"') });
    h.env.CRM_HOOK_TOKEN = "/gw-batch/gw/";
    const r = await applyCli();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error\[BATCH_ROUTE_RESERVED\] apis\/orders\.yaml:7:63 ApiDefinition\/orders spec\.query\.listenPath: .*is a secret reference/);
    expect(h.sandbox.inspect.calls().log).toEqual([]);
    expectNothingReceived();
  });

  it("through an environment's overlay patch: validate and apply --env refuse it; the environment without the patch applies", async () => {
    other = await startReceiver();
    h = await harness({
      files: ordersAt(other.url, "listenPath: /orders/"),
      configExtra: `environments:\n  staging: {}\n  evil:\n    patches:\n      - { kind: ApiDefinition, metadata: { name: orders }, spec: { apiId: gw-loopback } }\n`,
    });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const validate = await runCli(["validate", "--config", cfg], { ...h.env, ...quiet });
    expect(validate.code).toBe(1);
    expect(validate.stdout + validate.stderr).toMatch(/BATCH_ROUTE_RESERVED.*apiId "gw-loopback" is the batch route's loopback API/);
    const r = await applyCli(["--env", "evil"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error[BATCH_ROUTE_RESERVED]");
    expect(h.sandbox.inspect.calls().log).toEqual([]);
    const staging = await applyCli(["--env", "staging"]);
    expect(staging.stdout).toContain("Apply: 2 applied");
    expect(staging.code).toBe(0);
    expectNothingReceived();
  });
});

describe("a run that may change the batch route anyway", () => {
  it("without targets.gateway.batch.apiId, an API change that gives no listen path sends its wave directly, and says so", async () => {
    const files = {
      "apis/pets.yaml": doc("ApiDefinition", "pets", 'apiId: petstore-v1\ndefinition:\n  openapi: 3.1.0\n  info: { title: Pets, version: "1" }\n  paths: {}'),
      "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 5"),
    };
    h = await harness({ files });
    const cfg = path.join(h.dir, "gatesync.yaml");
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace("apiId: gw-loopback, ", ""));
    const r = await applyCli();
    expect(r.stdout).toContain("Apply: 2 applied");
    expect(r.stdout).toMatch(/Calls: gateway 2, /);
    expect(r.stdout).toContain(
      "Batching was off from wave 1 on: ApiDefinition/pets gives no listen path, so it may patch the batch route's loopback API (targets.gateway.batch.apiId is not set: set it to the loopback API's id to keep such changes batched): those calls went directly.",
    );
    expect(h.sandbox.inspect.calls().log.filter((c) => c.operation === "batch")).toEqual([]);
    // the hint followed: with the loopback API's id set, the next changes of both travel in one batch call
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace("batch: { listenPath: /gw-batch/, ", "batch: { listenPath: /gw-batch/, apiId: gw-loopback, "));
    await writeFile(path.join(h.dir, "config/apis/pets.yaml"), files["apis/pets.yaml"].replace("title: Pets", "title: Pets v2"));
    await writeFile(path.join(h.dir, "config/k.yaml"), files["k.yaml"].replace("rate: 5", "rate: 6"));
    const again = await applyCli();
    expect(again.stdout).toContain("Apply: 2 applied");
    expect(again.stdout).toMatch(/Calls: gateway 1 \(1 batch call carrying 2 changes\)/);
    expect(again.stdout).not.toContain("Batching was off");
  });
});

describe("a redirect from the gateway's address", () => {
  for (const batch of [true, false]) {
    it(`is not followed: the credential stays with the configured target (${batch ? "batch calls" : "direct calls"})`, async () => {
      other = await startReceiver();
      const to = other.url;
      ({ h, proxy } = await throughProxy("gateway", [{ path: /./, then: { kind: "answer", status: 307, headers: { location: `${to}/stolen` }, body: "{}" } }], {
        files: { "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 5") },
        batch,
      }));
      const r = await applyCli();
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/OrgKey\/k: 307/);
      expect(proxy.calls.length).toBeGreaterThan(0);
      expectNothingReceived();
    });
  }
});

describe("a batch answer that is not the gateway's", () => {
  const keys = {
    "reset.yaml": doc("OrgKey", "reset", 'keyId: reset\nrate: 5\nquota_max: 10\nquota_renewal_rate: 60\nquotaResetTrigger: "2026-11"'),
    "a.yaml": doc("OrgKey", "a", "keyId: a\nrate: 5"),
  };
  const cases = [
    {
      what: "items of the right shape whose 200s carry another server's body",
      body: JSON.stringify([
        { relative_url: "org/keys/a", code: 200, headers: { "Content-Type": ["text/html"] }, body: "<html>ok</html>" },
        { relative_url: "org/keys/reset?reset_quota=1", code: 200, headers: {}, body: "{}" },
      ]),
      reset: /its batch result is 200 without the gateway's answer to upsertOrgKey/,
    },
    {
      what: "items without the gateway's members (no headers)",
      body: JSON.stringify([
        { relative_url: "org/keys/a", code: 200, body: '{"key":"a","status":"ok","action":"added"}' },
        { relative_url: "org/keys/reset?reset_quota=1", code: 200, body: '{"key":"reset","status":"ok","action":"added"}' },
      ]),
      reset: /without the list of results the gateway gives \(item 1 is not \{relative_url, code, headers, body\}/,
    },
  ];
  for (const c of cases) {
    it(`${c.what}: in doubt or failed as unknown, never applied; the next plan still shows both`, async () => {
      ({ h, proxy } = await throughProxy(
        "gateway",
        [{ method: "POST", path: /\/gw\/batch\/?$/, then: { kind: "answer", status: 200, body: c.body } }],
        { files: keys },
        (y) => y.replace("retries: { max: 4,", "retries: { max: 1,"),
      ));
      const r = await applyCli();
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/Apply: 0 applied, 1 failed, 1 in doubt/);
      expect(r.stdout).toMatch(new RegExp(`OrgKey/reset: .*${c.reset.source}`));
      expect(r.stdout).toMatch(/OrgKey\/a: .*outcome unknown after 2 tries/);
      const records = (await h.state.read()).resources;
      expect([...records.values()].filter((x) => x.status === "applied")).toEqual([]);
      const plan = await runCli(["plan", "--config", path.join(h.dir, "gatesync.yaml")], { ...h.env, ...quiet });
      expect(plan.stdout).toContain("OrgKey/a");
      expect(plan.stdout).toContain("OrgKey/reset");
      expect(plan.stdout).not.toMatch(/No changes/);
    }, 30_000);
  }
});
