/**
 * Traces of the daemon's runs, as the collector receives them: a real `gatesync run` process
 * against the sandbox, exporting to a receiver on loopback. Each run is a root `gatesync.run`
 * span; a `/sync` request carrying `traceparent` makes its run a child of that trace.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { exampleSecrets, harness } from "../helpers/apply.js";
import { spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { startReceiver } from "../helpers/otlp-receiver.js";
import type { ExportedSpan, Receiver } from "../helpers/otlp-receiver.js";
import { call } from "../helpers/sandbox.js";

let h: Harness | undefined;
let receiver: Receiver | undefined;
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  if (daemon !== undefined && daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
  daemon = undefined;
  await h?.stop();
  h = undefined;
  await receiver?.stop();
  receiver = undefined;
});

const syncToken = "tracing-daemon-sync-token";
const traceId = "0af7651916cd43dd8448eb211c80319c";
const parentId = "b7ad6b7169203331";
const finishedRuns = (out: string): number => out.split('"msg":"run finished"').length - 1;

describe("tracing the daemon (OTLP/HTTP)", () => {
  it("exports one gatesync.run root per run, its tree below it, and a /sync request's traceparent as its parent", async () => {
    receiver = await startReceiver("ok");
    h = await harness({
      batch: true,
      ownCredentials: true,
      configExtra: 'server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }\nschedule: { interval: 1h }\n',
    });
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50" };
    daemon = await spawnDaemon(path.join(h.dir, "gatesync.yaml"), h.dir, { ...h.env, SYNC_TOKEN: syncToken, ...otel });
    await eventually(
      () => daemon!.output(),
      (out) => finishedRuns(out) >= 1,
      60_000,
    );
    const sync = await call(`${daemon.url}/sync`, {
      method: "POST",
      headers: { authorization: `Bearer ${syncToken}`, traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect(sync.status).toBe(202);
    await eventually(
      () => daemon!.output(),
      (out) => finishedRuns(out) >= 2,
      60_000,
    );
    // a traceparent that is no trace context (a client's worst value): the run happens, as a root of its own
    const garbled = await call(`${daemon.url}/sync`, {
      method: "POST",
      headers: { authorization: `Bearer ${syncToken}`, traceparent: `00-${"z".repeat(32)}-${"x".repeat(4_000)}-01` },
    });
    expect(garbled.status).toBe(202);
    await eventually(
      () => daemon!.output(),
      (out) => finishedRuns(out) >= 3,
      60_000,
    );
    daemon.child.kill("SIGTERM");
    await new Promise<void>((resolve) => daemon!.child.once("close", () => resolve()));
    expect(daemon.child.exitCode).toBe(0);

    const spans = receiver.spans();
    const runs = spans.filter((s) => s.name === "gatesync.run");
    expect(runs.map((r) => r.attributes["gatesync.trigger"])).toEqual(["start", "sync", "sync"]);
    const [first, synced, unparented] = runs as [ExportedSpan, ExportedSpan, ExportedSpan];
    expect(unparented.parentSpanId ?? "").toBe("");
    expect(unparented.attributes).toMatchObject({ "gatesync.outcome": "applied", "gatesync.failed": 0 });
    expect(unparented.traceId).not.toBe(traceId);
    expect(first.parentSpanId ?? "").toBe("");
    expect(first.attributes).toMatchObject({
      "gatesync.environment": "default",
      "gatesync.outcome": "applied",
      "gatesync.findings.errors": 0,
      "gatesync.applied": 17,
      "gatesync.failed": 0,
      "gatesync.in_doubt": 0,
      "gatesync.changes.create": 10,
    });
    expect(first.attributes["gatesync.calls.total"]).toBeGreaterThan(0);
    expect(first.attributes["gatesync.revision"]).toBeTypeOf("string");
    expect(synced).toMatchObject({ traceId, parentSpanId: parentId });
    expect(synced.attributes).toMatchObject({ "gatesync.outcome": "applied", "gatesync.failed": 0 });

    // the first run's tree: fetch, validate, plan, the waves and their calls, all in its trace
    const below = (of: ExportedSpan): string[] => spans.filter((s) => s.parentSpanId === of.spanId).map((s) => s.name);
    expect(below(first)).toEqual(expect.arrayContaining(["gatesync.source.fetch", "gatesync.validate", "gatesync.plan", "gatesync.wave"]));
    expect(spans.filter((s) => s.traceId === first.traceId && s.attributes["url.template"] !== undefined).length).toBeGreaterThan(0);
    expect(below(synced)).toEqual(expect.arrayContaining(["gatesync.source.fetch", "gatesync.validate", "gatesync.plan"]));

    const exported = receiver.bodies.join("\n");
    const planted = [...Object.values(exampleSecrets), ...Object.values(h.env).filter((v) => v.length >= 8), syncToken];
    expect(planted.filter((p) => exported.includes(p))).toEqual([]);
  }, 180_000);
});
