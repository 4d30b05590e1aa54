/**
 * A trigger's trace context across a fleet (real `gatesync run` replicas on the real PostgreSQL,
 * each environment on its own sandbox, both exporting to one OTLP receiver on loopback): a
 * `/sync` carrying `traceparent` at one replica makes every environment's run a child of that
 * trace — the one it leads and the one its peer leads, reached over NOTIFY — and so does
 * `/environments/NAME/sync` relayed to NAME's leader. A trace context a peer sends that is none
 * (a replica's word is untrusted) is dropped: the trigger still runs, as a root of its own.
 */
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { doc } from "../helpers/plan.js";
import { startReceiver } from "../helpers/otlp-receiver.js";
import type { ExportedSpan, Receiver } from "../helpers/otlp-receiver.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { spawnReplica, untilWithLogs } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const replicas: Replica[] = [];
const sandboxes: SandboxHandle[] = [];
const envSchemas: string[] = [];
let receiver: Receiver | undefined;

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  for (const s of sandboxes) await s.stop();
  await receiver?.stop();
  for (const s of envSchemas.splice(0)) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await dropTestSchemas();
  await removeTempRepos();
});

const syncToken = "tracing-fleet-sync-token";
const envs = ["e1", "e2"];

const until = untilWithLogs(replicas);

/** Two environments, one sandbox each, on a PostgreSQL state: a fleet's config. */
async function fleetRepo(): Promise<{ dir: string; schema: string }> {
  const schema = testSchema();
  envSchemas.push(...envs.map((e) => `${schema}_${e}`));
  while (sandboxes.length < envs.length) sandboxes.push(await testSandbox());
  const environments = envs.map((e, i) => `  ${e}:\n    targets:\n      gateway: { url: ${sandboxes[i]!.urls.gateway}, credentialEnv: GW_KEY }\n`).join("");
  const dir = await tempRepo({
    "config/keys.yaml": doc("OrgKey", "k0", "keyId: k0\nrate: 10"),
    "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY }
environments:
${environments}state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }
schedule: { interval: 1h, jitter: 0 }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
`,
  });
  return { dir, schema };
}

const leads = async (r: Replica): Promise<string[]> => ((await call(`${r.url}/status`)).body as { fleet: { leads: string[] } }).fleet.leads;

/** The `gatesync.run` spans of sync runs received so far. */
const syncRuns = (): ExportedSpan[] => receiver!.spans().filter((s) => s.name === "gatesync.run" && s.attributes["gatesync.trigger"] === "sync");
const ofEnvironment = (runs: ExportedSpan[], e: string): ExportedSpan[] => runs.filter((s) => s.attributes["gatesync.environment"] === e);

describe("a trigger's traceparent across a fleet", () => {
  let a: Replica;
  let b: Replica;
  let schema: string;

  it("joins every environment's run to a /sync request's trace: the one this replica leads and the one its peer leads", async () => {
    receiver = await startReceiver("ok");
    const repo = await fleetRepo();
    schema = repo.schema;
    const env = {
      GATESYNC_LOG_LEVEL: "info",
      GW_KEY: testCredentials.gatewayKey,
      DATABASE_URL: pgUrl,
      SYNC_TOKEN: syncToken,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    };
    a = spawnReplica("a", path.join(repo.dir, "gatesync.yaml"), repo.dir, env);
    b = spawnReplica("b", path.join(repo.dir, "gatesync.yaml"), repo.dir, env);
    replicas.push(a, b);
    await until(() => a.url !== undefined && b.url !== undefined, Boolean, 60_000, "for both to listen");
    await until(
      async () => [(await leads(a)).length, (await leads(b)).length],
      ([x, y]) => x === 1 && y === 1,
      60_000,
      "for a 1/1 split",
    );

    const traceId = "5b8efff798038103d269b633813fc60c";
    const parentId = "eee19b7ec3c1b174";
    const answer = await call(`${a.url}/sync`, {
      method: "POST",
      headers: { authorization: `Bearer ${syncToken}`, traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect(answer.status).toBe(202);
    const runs = await until(syncRuns, (s) => envs.every((e) => ofEnvironment(s, e).length > 0), 60_000, "for both environments' sync runs to be exported");
    for (const e of envs) expect(ofEnvironment(runs, e)[0], e).toMatchObject({ traceId, parentSpanId: parentId });
  }, 150_000);

  it("joins the run of /environments/NAME/sync, relayed to NAME's leader, to the request's trace", async () => {
    const [target] = await leads(b);
    const traceId = "0c6c9f1a6c2e4b7f8a1d2e3f4a5b6c7d";
    const parentId = "1a2b3c4d5e6f7081";
    const answer = await call(`${a.url}/environments/${target}/sync`, {
      method: "POST",
      headers: { authorization: `Bearer ${syncToken}`, traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect([answer.status, answer.body]).toEqual([202, { status: "accepted", forwardedTo: "leader" }]);
    const run = await until(
      () => syncRuns().find((s) => s.traceId === traceId),
      (s) => s !== undefined,
      60_000,
      "for the leader's run in the request's trace",
    );
    expect(run).toMatchObject({ parentSpanId: parentId, attributes: { "gatesync.environment": target } });
  }, 60_000);

  it("drops a client's trace context that is none before relaying it (the NOTIFY stays small), and still runs every environment", async () => {
    const before = syncRuns().length;
    // near the 8000-byte NOTIFY limit: carried to the peer as it came, the trigger could not be sent
    const garbled = `00-${"z".repeat(32)}-${"x".repeat(7_900)}-01`;
    const answer = await call(`${a.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}`, traceparent: garbled } });
    expect([answer.status, answer.body]).toEqual([202, { status: "accepted", forwardedTo: "leader" }]);
    const runs = await until(
      () => syncRuns().slice(before),
      (s) => envs.every((e) => ofEnvironment(s, e).length > 0),
      60_000,
      "for both environments' runs",
    );
    for (const e of envs) expect(ofEnvironment(runs, e)[0]!.parentSpanId ?? "", e).toBe("");
  }, 60_000);

  it("drops a trace context a peer sends that is none, and still runs its trigger as a root of its own", async () => {
    const [target] = await leads(b);
    const before = ofEnvironment(syncRuns(), target!).length;
    // a peer's message as it could be written: the form of a trigger, a traceparent of 4 KiB
    const garbled = `00-${"z".repeat(32)}-${"x".repeat(4_000)}-01`;
    const message = { kind: "trigger", schema, environments: [target], reason: "sync", nonce: "n-garbled", from: "a-peer", traceparent: garbled };
    await sql("SELECT pg_notify('gatesync_fleet', $1)", [JSON.stringify(message)]);
    const runs = await until(
      () => ofEnvironment(syncRuns(), target!),
      (s) => s.length > before,
      60_000,
      "for the leader to run the peer's trigger",
    );
    expect(runs[runs.length - 1]!.parentSpanId ?? "").toBe("");
    expect(receiver!.bodies.join("\n")).not.toContain("x".repeat(64));
  }, 60_000);
});
