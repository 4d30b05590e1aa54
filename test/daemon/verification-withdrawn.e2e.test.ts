/**
 * Verification is a state, not an event, and a failed check says why (docs/user/promotion.md):
 * a daemon over a real git repository and two sandboxes, staging's petstore checked through its
 * batch route against an upstream the test controls. Once staging verified a revision, its
 * upstream starts answering 502: staging's next run of the same revision (a re-assertion) fails
 * its check, the verification is withdrawn — a history row — and production is refused the
 * revision; the check's reason (which check, expected against got, the answer) is in the run's
 * row, /status, the status page, `gatesync history` (the refusal's hint), the notification and
 * the refusal. Without re-assertion, the run at the soak's end checks again: an upstream broken
 * during the soak is never verified.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { promotionDaemon } from "../helpers/promotion-daemon.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";
import { startReceiver } from "../helpers/receiver.js";
import type { Receiver } from "../helpers/receiver.js";
import { call, testCredentials } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

/** The API's backend: answers `status` to everything (the incident flips it). */
let upstreamStatus = 200;
let upstream: Server;
let upstreamUrl = "";
let receiver: Receiver;
const daemons: PromotionDaemon[] = [];

beforeAll(async () => {
  upstream = createServer((_req, res) => {
    res.writeHead(upstreamStatus, { "content-type": "application/json" });
    res.end(JSON.stringify(upstreamStatus === 200 ? [] : { error: "pets backend down" }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  receiver = await startReceiver();
});

afterAll(async () => {
  for (const d of daemons) await d.stop();
  await receiver.stop();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  await removeTempRepos();
});

const api = (): Record<string, string> => ({
  "config/api.yaml": `${doc(
    "ApiDefinition",
    "petstore",
    `apiId: petstore-v1\ndefinition:\n  openapi: 3.0.3\n  info: { title: petstore, version: "1" }\n  servers: [{ url: "${upstreamUrl}" }]\n  x-gw-api-gateway:\n    info: { name: petstore, state: { active: true } }\n    upstream: { url: "${upstreamUrl}" }\n    server: { listenPath: { value: /petstore/, strip: true }, batchProcessing: { enabled: true } }\n  paths:\n    /pets:\n      get:\n        responses:\n          "200": { description: ok }`,
  )}  query: { listenPath: /petstore/ }\n  verify:\n    - path: pets\n      expectStatus: 200\n`,
  "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10"),
});

const errorOf = (body: unknown): string => (body as { error?: string }).error ?? "";
const expectedGot = "ApiDefinition/petstore: GET pets: expected 200, got 502";

describe("a verification withdrawn by a failing run", () => {
  it("is not promoted, and the failed check's reason is in every place that shows the run", async () => {
    upstreamStatus = 200;
    const stagingSettings = `    schedule: { interval: 1h, reassertInterval: 1s }\n    notifications: { receivers: [{ type: webhook, url: "${receiver.url}", secretEnv: SYNC_TOKEN }] }\n`;
    const d = await promotionDaemon(api(), "manual", { stagingSettings });
    daemons.push(d);
    const verified = await eventually(
      () => d.promote({ dryRun: true }),
      (a) => a.status === 200,
    );
    const v1 = (verified.body as { revision: string }).revision;
    const short = v1.slice(0, 12);

    // the incident: petstore's backend fails; staging runs the same revision again (a re-assertion)
    upstreamStatus = 502;
    const staging = d.daemon.environments.get("staging")!;
    // syncs until one re-asserts (once a second): its check fails
    await eventually(
      async () => {
        await d.sync();
        await new Promise((resolve) => setTimeout(resolve, 200));
        return staging.lastRun;
      },
      (r) => r?.summary?.health.some((h) => !h.ok) === true,
    );
    expect(staging.lastRun?.result).toBe("applied");
    const refused = await eventually(
      () => d.promote({ revision: v1, dryRun: true }),
      (a) => a.status === 409,
    );
    expect((await d.promote({ revision: v1 })).status).toBe(409);
    // /metrics: the withdrawal counted, staging's newest revision failing, both refusals counted
    const metrics = await eventually(
      async () => (await fetch(`${d.daemon.url}/metrics`)).text(),
      (text) => text.includes('gatesync_verification_state{state="failing",environment="staging"} 1'),
    );
    expect(metrics).toContain('gatesync_verifications_total{result="withdrawn",environment="staging"} 1');
    expect(metrics).toContain('gatesync_verifications_total{result="verified",environment="staging"} 1');
    expect(metrics).toMatch(/^gatesync_promotions_total\{kind="promotion",actor="token",result="refused",environment="production"\} ([2-9]|\d\d+)$/m);
    const error = errorOf(refused.body);
    expect(error).toMatch(new RegExp(`^production cannot take ${short}: ${short}'s verification in staging was withdrawn at \\S+: post-apply check failed: `));
    expect(error).toContain(expectedGot);
    expect(error).toContain("pets backend down");
    expect(error).not.toContain(testCredentials.gatewayKey);
    expect(d.production.inspect.store.orgKeys.get("org-acme")).toBeUndefined();

    // the hint, followed: gatesync history --env staging shows the withdrawal and the check that failed
    expect((refused.body as { hint?: string }).hint).toBe("see gatesync history --env staging");
    const history = await runCli(["history", "-c", d.operatorFile, "--env", "staging"], d.env);
    expect(history.code).toBe(0);
    expect(history.stdout).toContain(`withdrew the verification of ${short}: post-apply check failed: ${expectedGot}`);
    expect(history.stdout).toMatch(new RegExp(`check failed: ${expectedGot}; answer: .*pets backend down`));

    // /environments/staging/status: the resource's health, the last run and the verification
    const status = (await call(`${d.daemon.url}/environments/staging/status`)).body as {
      resources: Array<{ id: string; health?: { ok: boolean; reason?: string } }>;
      lastRun: { checkFailures?: string[] };
      verification: { verified: Array<{ revision: string }>; withdrawn: Array<{ revision: string; reason: string }> };
    };
    const health = status.resources.find((r) => r.id === "ApiDefinition/petstore")?.health;
    expect(health?.ok).toBe(false);
    expect(health?.reason).toContain(expectedGot);
    expect(status.lastRun.checkFailures?.[0]).toContain(expectedGot);
    expect(status.verification.verified.map((v) => v.revision)).not.toContain(v1);
    expect(status.verification.withdrawn[0]?.revision).toBe(v1);
    expect(status.verification.withdrawn[0]?.reason).toContain(expectedGot);
    const all = (await call(`${d.daemon.url}/status`)).body as { environments: Array<{ environment: string; lastRun: { checkFailures?: string[] } }> };
    expect(all.environments.find((e) => e.environment === "staging")?.lastRun.checkFailures?.[0]).toContain(expectedGot);

    // the status pages: staging's overview and resource page say why; production's no longer offers v1
    expect((await call(`${d.daemon.url}/environments/staging/`)).text).toContain("GET pets: expected 200, got 502");
    expect((await call(`${d.daemon.url}/environments/staging/resources/ApiDefinition/petstore`)).text).toContain(expectedGot);
    const production = (await call(`${d.daemon.url}/environments/production/`)).text;
    expect(production).toContain("no longer a candidate");
    expect(production).not.toContain(`gatesync promote production --revision ${short}`);

    // the notification: the run applied, its check failed, and why
    const told = await eventually(
      () => receiver.received.map((r) => JSON.parse(r.body) as { event: string; checks?: string[]; summary: string }),
      (events) => events.some((e) => e.checks !== undefined),
    );
    const event = told.find((e) => e.checks !== undefined)!;
    expect(event.event).toBe("run-failed");
    expect(event.checks![0]).toContain(expectedGot);
    expect(event.summary).toContain(expectedGot);
  }, 120_000);

  it("the run at the soak's end checks again: a backend broken during the soak is never verified", async () => {
    upstreamStatus = 200;
    const d = await promotionDaemon(api());
    daemons.push(d);
    const staging = d.daemon.environments.get("staging")!;
    await eventually(
      () => staging.lastRun,
      (r) => r?.result === "applied" && r.reason !== "soak",
    );
    // its first run was healthy; the backend fails before the soak ends
    upstreamStatus = 502;
    const soakRun = await eventually(
      () => staging.lastRun,
      (r) => r?.reason === "soak",
    );
    expect(soakRun?.summary?.health.some((h) => !h.ok)).toBe(true);
    const refused = await d.promote({ dryRun: true });
    expect(refused.status).toBe(409);
    expect(errorOf(refused.body)).toBe("staging has verified no revision yet: nothing to promote to production");
    const status = (await call(`${d.daemon.url}/environments/staging/status`)).body as { verification?: unknown };
    expect(status.verification).toBeUndefined();
  }, 120_000);
});
