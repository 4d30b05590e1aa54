/**
 * Traces of a CLI apply, as an operator's collector receives them: a real `gatesync apply`
 * process against the sandbox, exporting over OTLP/HTTP (JSON) to a receiver on loopback. The
 * span tree and its attributes, the CI job's TRACEPARENT as the root's parent, no planted secret
 * in what leaves, and a collector that hangs or refuses costs the run nothing but the bounded flush.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { operations } from "../../src/contract/operations.js";
import { flushBudgetMs } from "../../src/telemetry/tracing.js";
import type { Harness } from "../helpers/apply.js";
import { exampleSecrets, harness } from "../helpers/apply.js";
import { spawnCli } from "../helpers/cli.js";
import { git } from "../helpers/git-repo.js";
import { startReceiver } from "../helpers/otlp-receiver.js";
import type { ExportedSpan, Receiver } from "../helpers/otlp-receiver.js";

let h: Harness | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
  await receiver?.stop();
  receiver = undefined;
});

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const parentId = "00f067aa0ba902b7";

async function tracedApply(
  endpoint: string | undefined,
  configExtra = "",
  extraEnv: Record<string, string> = {},
  checkout: (dir: string) => string[] = () => [],
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  h = await harness({ batch: true, ownCredentials: true, configExtra });
  const dirFlags = checkout(h.dir);
  const otel = endpoint === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: "gatesync-ci", OTEL_BSP_SCHEDULE_DELAY: "50" };
  const started = performance.now();
  const r = await spawnCli(["apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state", ...dirFlags], {
    cwd: h.dir,
    env: { ...h.env, ...otel, ...extraEnv, TRACEPARENT: `00-${traceId}-${parentId}-01`, GATESYNC_LOG_LEVEL: "silent", CI: undefined },
  });
  return { ...r, ms: performance.now() - started };
}

describe("tracing a CLI apply (OTLP/HTTP)", () => {
  it("exports the documented span tree, joined to TRACEPARENT, with no secret in it", async () => {
    receiver = await startReceiver("ok");
    // a CI job applying its checkout (--dir): the command's root names the commit it applied
    let commit = "";
    const r = await tracedApply(receiver.url, "", {}, (dir) => {
      git(dir, "init", "-q", "-b", "main");
      git(dir, "add", "-A");
      git(dir, "commit", "-q", "-m", "the commit CI checked out");
      commit = git(dir, "rev-parse", "HEAD");
      return ["--dir", path.join(dir, "config")];
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("Apply: 17 applied");
    const spans = receiver.spans();
    expect(receiver.resource()["service.name"]).toBe("gatesync-ci");

    const root = spans.find((s) => s.name === "gatesync.apply")!;
    expect(root).toBeDefined();
    expect(root).toMatchObject({ traceId, parentSpanId: parentId });
    expect(root.attributes).toMatchObject({ "gatesync.command": "apply", "gatesync.exit_code": 0, "gatesync.outcome": "ok" });
    // the revision and the counts an operator reads a run by, on its root as on a daemon run's
    expect(root.attributes).toMatchObject({
      "gatesync.revision": commit,
      "gatesync.findings.errors": 0,
      "gatesync.changes.create": 10,
      "gatesync.changes.blocked": 0,
      "gatesync.changes.breaking": 0,
      "gatesync.applied": 17,
      "gatesync.failed": 0,
      "gatesync.in_doubt": 0,
    });
    expect(root.attributes["gatesync.calls.total"]).toBeGreaterThan(0);
    expect(spans.every((s) => s.traceId === traceId)).toBe(true);
    const children = (of: ExportedSpan): ExportedSpan[] => spans.filter((s) => s.parentSpanId === of.spanId);
    const names = children(root).map((s) => s.name);
    expect(names).toContain("gatesync.validate");
    expect(names).toContain("gatesync.plan");
    expect(names.filter((n) => n === "gatesync.wave").length).toBeGreaterThanOrEqual(2);
    // the examples' petstore API has verify: checks, run after the waves
    expect(spans.find((s) => s.name === "gatesync.post_apply")?.attributes).toMatchObject({ "gatesync.checks.failed": 0 });

    expect(spans.find((s) => s.name === "gatesync.validate")!.attributes).toMatchObject({ "gatesync.resources": 17, "gatesync.findings.errors": 0 });
    expect(spans.find((s) => s.name === "gatesync.plan")!.attributes).toMatchObject({ "gatesync.changes.breaking": 0, "gatesync.changes.blocked": 0 });

    // every call is a client span under a wave, named by its route template, never by the path sent
    const waves = spans.filter((s) => s.name === "gatesync.wave");
    // (a batch's outcomes are recorded after its call, in the wave: their state writes sit beside it)
    const calls = waves.flatMap(children).filter((s) => s.name !== "gatesync.state.write");
    const templates = new Set<string>(Object.values(operations).map((o) => o.path));
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.kind).toBe(3); // SPAN_KIND_CLIENT
      expect(templates.has(String(call.attributes["url.template"])), JSON.stringify(call)).toBe(true);
      expect(call.attributes["http.request.method"]).toMatch(/^(GET|POST|PUT|PATCH)$/);
      expect(call.attributes["http.response.status_code"]).toBeTypeOf("number");
    }
    // each call's state writes are events on it, in its time: the intent of a create before it leaves, every outcome once it settles
    const product = calls.find((c) => c.attributes["url.template"] === operations.createProduct.path)!;
    const writes = product.events.filter((e) => e.name === "gatesync.state.write");
    expect(writes.map((e) => e.attributes["gatesync.record.status"])).toEqual(["in-doubt", "applied"]);
    for (const w of writes) {
      expect(w.attributes).toMatchObject({ "gatesync.resource": product.attributes["gatesync.resource"] });
      expect(w.attributes["gatesync.duration_ms"]).toBeTypeOf("number");
      expect(BigInt(w.timeUnixNano) >= BigInt(product.startTimeUnixNano) && BigInt(w.timeUnixNano) <= BigInt(product.endTimeUnixNano)).toBe(true);
    }
    expect(children(product)).toEqual([]);
    const batch = calls.filter((c) => c.attributes["url.template"] === operations.batch.path);
    expect(batch.length).toBeGreaterThan(0);
    // a batch's outcomes share one commit and one span beside it, counting its records (its intents, before it left, another)
    const batchWrites = waves
      .flatMap(children)
      .filter(
        (s) => s.name === "gatesync.state.write" && s.attributes["gatesync.records"] !== undefined && s.attributes["gatesync.record.status"] !== "in-doubt",
      );
    expect(batchWrites.map((s) => s.attributes["gatesync.records"]).reduce((a, b) => Number(a) + Number(b), 0)).toBe(
      batch.map((b) => b.attributes["gatesync.batch.size"]).reduce((a, b) => Number(a) + Number(b), 0),
    );
    expect(batch[0]!.attributes["gatesync.batch.size"]).toBeTypeOf("number");
    expect(
      calls.some((c) => c.attributes["url.template"] === operations.createProduct.path && typeof c.attributes["gatesync.queue_wait_ms"] === "number"),
    ).toBe(true);

    // planted: the examples' secrets and the sandbox's credentials, none of them anywhere in what left
    const exported = receiver.bodies.join("\n");
    const planted = [...Object.values(exampleSecrets), ...Object.values(h!.env).filter((v) => v.length >= 8)];
    expect(planted.filter((p) => exported.includes(p))).toEqual([]);
  }, 120_000);

  it("says on the post-apply span why a check failed: the check, expected against got", async () => {
    receiver = await startReceiver("ok");
    // the examples' petstore check expects a status its mock never answers
    const r = await tracedApply(receiver.url, "", {}, (dir) => {
      const file = path.join(dir, "config/apis/petstore.yaml");
      writeFileSync(file, readFileSync(file, "utf8").replace("expectStatus: 200", "expectStatus: 299"));
      return [];
    });
    expect(r.stdout).toContain("Apply: 17 applied");
    const postApply = receiver.spans().find((s) => s.name === "gatesync.post_apply");
    expect(postApply?.attributes).toMatchObject({ "gatesync.checks.failed": 1 });
    expect(String(postApply?.attributes["gatesync.checks.failures"])).toMatch(/^ApiDefinition\/petstore: GET pets: expected 299, got 200/);
  }, 120_000);

  it("a collector that never answers, refuses or answers 500 leaves the result unchanged and the CLI exits within the bounded flush", async () => {
    const plain = await tracedApply(undefined);
    expect(plain.code, plain.stderr).toBe(0);
    await h!.stop();
    h = undefined;
    for (const answer of ["hang", "500", "refused"] as const) {
      let endpoint: string;
      if (answer === "refused") {
        const closed = await startReceiver("ok");
        endpoint = closed.url;
        await closed.stop();
      } else {
        receiver = await startReceiver(answer);
        endpoint = receiver.url;
      }
      const traced = await tracedApply(endpoint);
      expect(traced.code, `${answer}: ${traced.stderr}`).toBe(0);
      expect(traced.stdout, answer).toContain("Apply: 17 applied, 0 failed, 0 in doubt");
      // the run's own path costs nothing; at its end the flush waits at most its budget
      expect(traced.ms, answer).toBeLessThan(plain.ms + flushBudgetMs + 3_000);
      if (answer !== "refused") expect(receiver!.bodies.length, answer).toBeGreaterThan(0);
      await h!.stop();
      h = undefined;
      await receiver?.stop();
      receiver = undefined;
    }
  }, 240_000);

  it("is configured by the operator's telemetry section too, the OTEL_* variables winning; OTEL_TRACES_EXPORTER=none keeps it off", async () => {
    receiver = await startReceiver("ok");
    const token = "collector-token-5f1e2d";
    const section = `telemetry:\n  traces:\n    endpoint: ${receiver.url}\n    serviceName: from-the-file\n    headersEnv: COLLECTOR_HEADERS\n    resourceAttributes: { deployment.environment.name: staging }\n`;
    const r = await tracedApply(undefined, section, { COLLECTOR_HEADERS: `authorization=Bearer%20${token}` });
    expect(r.code, r.stderr).toBe(0);
    expect(receiver.spans().some((s) => s.name === "gatesync.apply")).toBe(true);
    expect(receiver.resource()).toMatchObject({ "service.name": "from-the-file", "deployment.environment.name": "staging" });
    expect(receiver.headers[0]?.authorization).toBe(`Bearer ${token}`);
    expect(receiver.bodies.join("\n")).not.toContain(token);
    await h!.stop();

    const named = await tracedApply(undefined, section, { COLLECTOR_HEADERS: `authorization=Bearer%20${token}`, OTEL_SERVICE_NAME: "from-the-variable" });
    expect(named.code).toBe(0);
    expect(attributesOfLast(receiver)["service.name"]).toBe("from-the-variable");
    await h!.stop();

    const before = receiver.bodies.length;
    const off = await tracedApply(undefined, section, { OTEL_TRACES_EXPORTER: "none" });
    expect(off.code).toBe(0);
    expect(receiver.bodies.length).toBe(before);
  }, 120_000);
});

/** The resource of the last export received. */
function attributesOfLast(r: Receiver): Record<string, unknown> {
  return r.resourceOf(r.bodies.length - 1);
}
