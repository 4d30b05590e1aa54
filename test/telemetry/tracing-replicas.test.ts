/**
 * A trigger's trace context across replicas of one environment (real `gatesync run` processes on
 * the real PostgreSQL, both exporting to one OTLP receiver on loopback): a `/sync` carrying
 * `traceparent` at the standby is carried to the leader over NOTIFY with it, and the leader's
 * run is a child of that trace.
 */
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { doc } from "../helpers/plan.js";
import { startReceiver } from "../helpers/otlp-receiver.js";
import type { Receiver } from "../helpers/otlp-receiver.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { listening, spawnReplica, untilWithLogs } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const replicas: Replica[] = [];
let sandbox: SandboxHandle | undefined;
let receiver: Receiver | undefined;

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  await sandbox?.stop();
  await receiver?.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

const syncToken = "tracing-replicas-sync-token";

const until = untilWithLogs(replicas);

const role = async (r: Replica): Promise<string> => ((await call(`${r.url}/status`)).body as { role: string }).role;

describe("a trigger's traceparent across replicas of one environment", () => {
  it("is carried from the standby to the leader, whose run joins the request's trace", async () => {
    receiver = await startReceiver("ok");
    sandbox = await testSandbox();
    const dir = await tempRepo({
      "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10"),
      "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${testSchema()} }
schedule: { interval: 1h, jitter: 0 }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
`,
    });
    const env = {
      GATESYNC_LOG_LEVEL: "info",
      GW_KEY: testCredentials.gatewayKey,
      DATABASE_URL: pgUrl,
      SYNC_TOKEN: syncToken,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    };
    const [a, b] = [spawnReplica("a", path.join(dir, "gatesync.yaml"), dir, env), spawnReplica("b", path.join(dir, "gatesync.yaml"), dir, env)];
    replicas.push(a, b);
    await until(() => a.url !== undefined && b.url !== undefined, Boolean, 60_000, "for both to listen");
    const roles = await until(
      async () => [await role(a), await role(b)],
      (r) => r.includes("leader") && r.includes("standby"),
      60_000,
      "for a leader",
    );
    const standby = roles[0] === "standby" ? a : b;
    // a replica that does not lead is `standby` on /status before its lease connection is up: until then it carries no trigger
    await until(() => listening(standby), Boolean, 60_000, "for the standby to listen for triggers");

    const traceId = "6e0c63257de34c92bf9efcd03927272e";
    const parentId = "a3ce929d0e0e4736";
    const answer = await call(`${standby.url}/sync`, {
      method: "POST",
      headers: { authorization: `Bearer ${syncToken}`, traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect([answer.status, (answer.body as { forwardedTo?: string }).forwardedTo]).toEqual([202, "leader"]);
    const run = await until(
      () => receiver!.spans().find((s) => s.name === "gatesync.run" && s.traceId === traceId),
      (s) => s !== undefined,
      60_000,
      "for the leader's run in the request's trace",
    );
    expect(run).toMatchObject({ parentSpanId: parentId, attributes: { "gatesync.trigger": "sync", "gatesync.environment": "default" } });
  }, 120_000);
});
