/**
 * A traced apply of 1,000 gateway changes against an untraced one (issue 48): the same apply
 * in-process, batched and direct, with tracing on (every span exported over OTLP/HTTP to a
 * receiver on loopback that answers at once) and off, alternating (`BENCH_TRACED_MODES=direct`:
 * one mode only). Not rate-limited: what is
 * measured is the tracing's own cost on the run's path. The figures are the medians of each arm and
 * the median of the pairs' ratios (a pair's two applies ran a second apart, under
 * the same load). Writes bench/results.traced-apply.json. `npx tsx bench/traced-apply.ts`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Agent } from "undici";
import { runApply } from "../src/run/run-apply.js";
import type { GatesyncConfig } from "../src/config/config.js";
import { silentLogger } from "../src/logger.js";
import { SqliteStateBackend } from "../src/record/sqlite/sqlite-backend.js";
import { startSandbox } from "../src/sandbox/sandbox.js";
import { startTracing } from "../src/telemetry/tracing.js";
import { RepositoryValidator } from "../src/validate/repository/repository-validator.js";
import { credentials, env, loadNow, log, machineOf, reps } from "./common.js";
import { benchConfig } from "./daemon-runs.js";

const count = 1_000;

/**
 * One apply of `count` org keys from an empty state: its duration in seconds (validate, plan and
 * apply), and the CPU seconds this process spent meanwhile (the apply, the in-process sandbox it
 * calls, and the tracing: on a shared machine, the figure other processes' load disturbs least).
 */
async function applyOnce(batch: boolean, traced: string | undefined): Promise<{ wall: number; cpu: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-traced-"));
  const docs = Array.from(
    { length: count },
    (_, i) => `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: key-${i} }\nspec: { keyId: key-${i}, rate: ${i}, per: 60 }\n`,
  );
  await writeFile(path.join(dir, "keys.yaml"), docs.join("---\n"));
  const sandbox = await startSandbox({
    credentials,
    fixtures: {
      apis: [{ id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true }],
      keys: [{ key: env.BATCH_KEY, apis: ["gw-loopback"] }],
    },
    logSize: 100,
  });
  const base = benchConfig(dir, sandbox, "", { concurrency: 16, requestsPerSecond: 100_000 });
  const gateway = base.targets.gateway!;
  const config: GatesyncConfig = {
    ...base,
    source: { type: "directory", directory: dir, watch: false },
    targets: {
      gateway: batch ? gateway : { url: gateway.url, credentialEnv: gateway.credentialEnv, authScheme: gateway.authScheme, rateLimit: gateway.rateLimit },
    },
  };
  // the collector named as the operator's telemetry section names it: the SDK reads OTEL_* from process.env, not from an object
  const tracing = await startTracing({}, "bench", (m) => log(m), traced === undefined ? undefined : { endpoint: traced });
  const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
  const state = new SqliteStateBackend(path.join(dir, "state.db"));
  const t = performance.now();
  const cpu0 = process.cpuUsage();
  const r = await runApply({ config, root: dir, validator: new RepositoryValidator(), state, env, logger: silentLogger(), dispatcher });
  const used = process.cpuUsage(cpu0);
  const seconds = (performance.now() - t) / 1000;
  if (!("summary" in r) || r.summary.applied.length !== count) throw new Error("the apply did not apply every key");
  await tracing.shutdown();
  await state.close();
  await dispatcher.close();
  await sandbox.stop();
  await rm(dir, { recursive: true, force: true });
  return { wall: seconds, cpu: (used.user + used.system) / 1e6 };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percent = (off: number, on: number): string => `${(((on - off) / off) * 100).toFixed(1)}%`;
const hundredths = (x: number): number => Math.round(x * 100) / 100;
const ms = (seconds: number): number => Math.round(seconds * 1000);
/** The median of the pairs' ratios, traced over untraced, as a percentage added. */
const pairsPercent = (off: readonly number[], on: readonly number[]): number => hundredths((median(on.map((v, i) => v / off[i]!)) - 1) * 100);
const loadStart = loadNow();
const figures: Record<string, unknown> = {};

/** The spans the collector received (each export's span count, from its OTLP/JSON body): proof the traced runs exported them all. */
let received = 0;
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (b: Buffer) => (body += b.toString()));
  req.on("end", () => {
    received += body.split('"spanId":').length - 1;
    res.writeHead(200).end("{}");
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
const runs = Number(process.env.BENCH_TRACED_REPS ?? reps);
// BENCH_TRACED_CONTROL=1: the traced arm untraced too — how far the medians move with nothing to measure
const control = process.env.BENCH_TRACED_CONTROL === "1";
// BENCH_TRACED_MODES=direct (or batched) measures one mode only
const modes = (process.env.BENCH_TRACED_MODES ?? "batched,direct").split(",");
for (const batch of [true, false].filter((b) => modes.includes(b ? "batched" : "direct"))) {
  const off: Array<{ wall: number; cpu: number }> = [];
  const on: Array<{ wall: number; cpu: number }> = [];
  await applyOnce(batch, undefined); // warm-up
  await applyOnce(batch, endpoint);
  received = 0;
  for (let i = 0; i < runs; i++) {
    // which goes first alternates: neither arm always follows the other's clean-up (a traced arm's export, its garbage)
    if (i % 2 === 0) off.push(await applyOnce(batch, undefined));
    on.push(await applyOnce(batch, control ? undefined : endpoint));
    if (i % 2 === 1) off.push(await applyOnce(batch, undefined));
  }
  const [wallOff, wallOn] = [median(off.map((r) => r.wall)), median(on.map((r) => r.wall))];
  const [cpuOff, cpuOn] = [median(off.map((r) => r.cpu)), median(on.map((r) => r.cpu))];
  figures[batch ? "batched" : "direct"] = {
    pairs: runs,
    spansPerTracedApply: Math.round(received / runs),
    wallMs: { untraced: ms(wallOff), traced: ms(wallOn), addedPercent: hundredths(((wallOn - wallOff) / wallOff) * 100) },
    cpuMs: { untraced: ms(cpuOff), traced: ms(cpuOn), addedPercent: hundredths(((cpuOn - cpuOff) / cpuOff) * 100) },
    pairsMedianAddedPercent: {
      wall: pairsPercent(
        off.map((r) => r.wall),
        on.map((r) => r.wall),
      ),
      cpu: pairsPercent(
        off.map((r) => r.cpu),
        on.map((r) => r.cpu),
      ),
    },
  };
  log(
    `${batch ? "batched" : "direct"} (median of ${runs}, interleaved): untraced ${wallOff.toFixed(2)} s, traced ${wallOn.toFixed(2)} s: ${percent(wallOff, wallOn)}; ` +
      `CPU ${cpuOff.toFixed(2)} s vs ${cpuOn.toFixed(2)} s: ${percent(cpuOff, cpuOn)} ` +
      `(fastest: ${percent(Math.min(...off.map((r) => r.cpu)), Math.min(...on.map((r) => r.cpu)))}); ${Math.round(received / runs)} spans exported per traced apply`,
  );
}
receiver.close();
const results = {
  date: new Date().toISOString(),
  machine: machineOf(loadStart),
  changes: count,
  control,
  ...figures,
};
await writeFile(path.join(path.dirname(fileURLToPath(import.meta.url)), "results.traced-apply.json"), `${JSON.stringify(results, null, 2)}\n`);
