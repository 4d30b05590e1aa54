/**
 * What the sandbox sustains on loopback, so that it is never the bottleneck of a benchmark:
 * autocannon against three representative operations, and how long startSandbox takes.
 * Prints a table and writes bench/out/sandbox-throughput.json.
 *
 *   npx tsx bench/sandbox-throughput.ts [seconds-per-run]
 */
import { mkdir, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { startSandbox } from "../src/sandbox/sandbox.js";
import { exampleFixtures } from "../test/helpers/sandbox.js";

export interface SandboxThroughput {
  readonly startSandboxMs: { readonly median: number; readonly min: number; readonly max: number };
  readonly results: ReadonlyArray<{
    operation: string;
    requestsPerSecond: number;
    managementCallsPerSecond: number;
    latencyP50Ms: number;
    latencyP99Ms: number;
    non2xx: number;
    errors: number;
  }>;
}

/** What the sandbox sustains: autocannon against three operations, `seconds` each. */
export async function measureSandbox(seconds: number): Promise<SandboxThroughput> {
  const credentials = { gatewayKey: "bench-gw", portalKey: "bench-portal", dashboardToken: "bench-dash", llmKey: "bench-llm" };

  const startTimes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const s = await startSandbox({ credentials });
    startTimes.push(performance.now() - t);
    await s.stop();
  }

  const sandbox = await startSandbox({ credentials, fixtures: await exampleFixtures() });
  const oas = JSON.stringify({
    openapi: "3.1.0",
    info: { title: "t", version: "1" },
    servers: [{ url: "http://x" }],
    paths: { "/a": { get: { responses: { "200": { description: "ok" } } } } },
  });
  const batchBody = JSON.stringify({
    requests: Array.from({ length: 50 }, (_, i) => ({
      method: "POST",
      relative_url: `org/keys/batch-${i}`,
      headers: { authorization: "sandbox-loopback-key", "x-gw-authorization": credentials.gatewayKey },
      body: JSON.stringify({ rate: i }),
    })),
  });
  const runs = [
    {
      name: "op 7 upsert org key",
      method: "POST" as const,
      path: "/gw/org/keys/bench",
      headers: { "x-gw-authorization": credentials.gatewayKey },
      body: JSON.stringify({ rate: 10, per: 1 }),
      calls: 1,
    },
    {
      name: "op 1 patch API (OAS validated)",
      method: "PATCH" as const,
      path: "/gw/apis/oas/petstore-v1",
      headers: { "x-gw-authorization": credentials.gatewayKey },
      body: oas,
      calls: 1,
    },
    { name: "op 4 batch of 50 op-7 calls", method: "POST" as const, path: "/gw-batch/gw/batch/", headers: {}, body: batchBody, calls: 50 },
  ];

  const results = [];
  for (const run of runs) {
    sandbox.inspect.reset();
    const r = await autocannon({
      url: `${sandbox.urls.base}${run.path}`,
      method: run.method,
      headers: { ...run.headers, "content-type": "application/json" },
      body: run.body,
      connections: 16,
      duration: seconds,
    });
    const ok = r["2xx"];
    results.push({
      operation: run.name,
      requestsPerSecond: Math.round(r.requests.average),
      managementCallsPerSecond: Math.round(r.requests.average * run.calls),
      latencyP50Ms: r.latency.p50,
      latencyP99Ms: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors,
      ok,
    });
  }
  await sandbox.stop();
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return {
    startSandboxMs: {
      median: Number(median(startTimes).toFixed(1)),
      min: Number(Math.min(...startTimes).toFixed(1)),
      max: Number(Math.max(...startTimes).toFixed(1)),
    },
    results,
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const seconds = Number(process.argv[2] ?? 5);
  const report = { date: new Date().toISOString(), node: process.version, secondsPerRun: seconds, connections: 16, ...(await measureSandbox(seconds)) };
  console.table(
    report.results.map((r) => ({
      operation: r.operation,
      "req/s": r.requestsPerSecond,
      "mgmt calls/s": r.managementCallsPerSecond,
      "p50 ms": r.latencyP50Ms,
      "p99 ms": r.latencyP99Ms,
      "non-2xx": r.non2xx,
      errors: r.errors,
    })),
  );
  console.log(`startSandbox: median ${report.startSandboxMs.median} ms (min ${report.startSandboxMs.min}, max ${report.startSandboxMs.max})`);
  await mkdir(new URL("./out/", import.meta.url), { recursive: true });
  await writeFile(new URL("./out/sandbox-throughput.json", import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
}
