/**
 * Traces of environments that run side by side (issue 45 with issue 48): two environments of one
 * daemon, one on a gateway that answers every call late, run the same commit at once; each run's
 * spans are its own trace's — its fetch, validation, plan and waves once, its calls below its own
 * waves — however the two interleave. Real daemon, real sandboxes over HTTP, a real git
 * repository, the OpenTelemetry SDK exporting to a receiver on loopback.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { startTracing } from "../../src/telemetry/tracing.js";
import type { Tracing } from "../../src/telemetry/tracing.js";
import { startReceiver } from "../helpers/otlp-receiver.js";
import type { ExportedSpan, Receiver } from "../helpers/otlp-receiver.js";
import { testSandbox } from "../helpers/sandbox.js";
import type { SideBySide } from "../helpers/side-by-side.js";
import { mostAtOnce, orgKeys, sideBySide } from "../helpers/side-by-side.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

const sandboxes: SandboxHandle[] = [];
let running: SideBySide | undefined;
let receiver: Receiver | undefined;
let tracing: Tracing | undefined;

afterEach(async () => {
  for (const name of ["OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_BSP_SCHEDULE_DELAY"]) delete process.env[name];
  await running?.stop();
  running = undefined;
  await tracing?.shutdown();
  tracing = undefined;
  await receiver?.stop();
  receiver = undefined;
});

afterAll(async () => {
  for (const s of sandboxes) await s.stop();
  await removeTempRepos();
});

/** Each span's name, counted, in one trace. */
function namesIn(spans: readonly ExportedSpan[], traceId: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of spans.filter((x) => x.traceId === traceId)) counts[s.name] = (counts[s.name] ?? 0) + 1;
  return counts;
}

describe("tracing environments that run side by side", () => {
  it("gives each environment's run its own trace: its phases once each, its calls below its own waves", async () => {
    receiver = await startReceiver("ok");
    const env = { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50" };
    // the SDK's exporter reads its endpoint from the process's environment
    Object.assign(process.env, env);
    tracing = await startTracing(env, "test", (m) => {
      throw new Error(m);
    });
    const slow = await testSandbox();
    const fast = await testSandbox();
    sandboxes.push(slow, fast);
    running = await sideBySide(
      [
        { name: "slow", gateway: slow, values: { prefix: "slow" } },
        { name: "fast", gateway: fast, values: { prefix: "fast" } },
      ],
      2,
      orgKeys(3, 5),
    );
    slow.inspect.setFaults({ latencyMs: 1_500, interfaces: ["gateway"] });
    const before = running.runs.length;
    const commit = await running.push(orgKeys(3, 6), "rate 6");
    await running.sync();
    await running.ranCommit(commit, ["slow", "fast"], 60_000);
    const runs = running.runs.slice(before).filter((r) => r.report.commit === commit);
    // the two runs overlapped: had they taken turns, one trace's shape could not have borrowed the other's
    expect(mostAtOnce(runs.map((r) => r.report))).toBe(2);
    await tracing.shutdown();
    tracing = undefined;

    const spans = receiver.spans();
    const roots = spans.filter((s) => s.name === "gatesync.run" && s.attributes["gatesync.trigger"] === "sync");
    expect(roots.map((r) => r.attributes["gatesync.environment"]).sort()).toEqual(["fast", "slow"]);
    const [a, b] = roots.map((r) => namesIn(spans, r.traceId)) as [Record<string, number>, Record<string, number>];
    // the same commit, the same three changes in each: the same tree in each trace
    expect(a).toEqual(b);
    expect(a).toMatchObject({ "gatesync.run": 1, "gatesync.source.fetch": 1, "gatesync.validate": 1, "gatesync.plan": 1 });
    const ids = new Set(spans.map((s) => s.spanId));
    for (const root of roots) {
      const inTrace = spans.filter((s) => s.traceId === root.traceId && s !== root);
      // every span's parent is a span of its own trace, and the calls sit below a wave
      for (const s of inTrace) expect(ids.has(s.parentSpanId ?? ""), s.name).toBe(true);
      const waves = new Set(inTrace.filter((s) => s.name === "gatesync.wave").map((s) => s.spanId));
      const calls = inTrace.filter((s) => s.kind === 3);
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) expect(waves.has(c.parentSpanId ?? ""), c.name).toBe(true);
    }
  }, 120_000);
});
