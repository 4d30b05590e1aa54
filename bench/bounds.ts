/**
 * `BENCH_PARTS=bounds`: inputs bounded before work starts (issue 55), whole processes, one run.
 *
 * - YAML: `gatesync validate` of a 1.1 MB resource file whose 40,000-key mapping is written with
 *   `!!str` tags (which once sent it from the value-only parse to `yaml`, whose own duplicate-key
 *   check was quadratic: 33–59 s; the value-only parse now takes the core `!!str` on a scalar)
 *   against the same file without them; the ratio is the row (target ≤ 2×).
 * - SOPS: a daemon (`gatesync run`) whose one resource references four SOPS files of 36,000 junk
 *   age stanzas each (real stanzas by Debian's `age`, for a recipient that is not ours): `/healthz`
 *   asked every 10 ms from the daemon's start until its first run is refused, its latencies'
 *   p99 the row (target < 100 ms), and the time to the refusal.
 *
 * Runs the CLI as tests do: the built bundle when dist/ is fresh, else the sources through tsx.
 * Writes bench/results.bounds.json.
 *
 *   BENCH_PARTS=bounds npx tsx bench/run.ts
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cliArgs } from "../test/helpers/cli.js";
import { spawnDaemon, stopDaemon } from "../test/helpers/daemon-process.js";
import { loadNow, log, resultsHead, time } from "./common.js";
import { figure } from "./figures.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, "../test/fixtures/sops");
const keys = 20_000;

const head = "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata:\n  name: acme\n  annotations:\n";
const tail = "spec: { keyId: acme, org_id: acme, rate: 1, per: 60 }\n";
const bigFile = (tag: string): string =>
  `${head}${Array.from({ length: keys }, (_, i) => `    ${tag}team.example/annotation-${i}: "value ${i}"\n`).join("")}${tail}`;

async function validateMs(dir: string): Promise<number> {
  return time(async () => {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, cliArgs("validate", dir), { stdio: "ignore" });
      child.on("error", reject).on("close", () => resolve());
    });
  });
}

async function yamlRow(work: string): Promise<Record<string, unknown>> {
  const plain = path.join(work, "plain");
  const tagged = path.join(work, "tagged");
  await mkdir(plain);
  await mkdir(tagged);
  await writeFile(path.join(plain, "big.yaml"), bigFile(""));
  await writeFile(path.join(tagged, "big.yaml"), bigFile("!!str "));
  const plainMs = await validateMs(plain);
  const taggedMs = await validateMs(tagged);
  const bytes = (await readFile(path.join(tagged, "big.yaml"))).length;
  log(`yaml: ${bytes} bytes, plain ${Math.round(plainMs)} ms, !!str ${Math.round(taggedMs)} ms`);
  return { bytes, keys, plainMs: Math.round(plainMs), strTaggedMs: Math.round(taggedMs), ratio: Math.round((taggedMs / plainMs) * 100) / 100, target: "≤ 2" };
}

/** token.enc.json with `junk` real age stanzas for a recipient we hold no identity of. */
async function junkSops(junk: number): Promise<string> {
  const identity = execFileSync("age-keygen", { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const recipient = /public key: (age1\S+)/.exec(identity)![1]!;
  const enc = execFileSync("age", ["-a", "-r", recipient], { input: Buffer.alloc(32, 7), encoding: "utf8" });
  const token = JSON.parse(await readFile(path.join(fixtures, "token.enc.json"), "utf8")) as { sops: { age: unknown[] } };
  return JSON.stringify({ ...token, sops: { ...token.sops, age: [...token.sops.age, ...Array.from({ length: junk }, () => ({ recipient, enc }))] } });
}

const syncToken = "bench-bounds-sync-token";

/** Asks /healthz every 10 ms (its latencies into `latencies`) until /status names a run started after `after`. */
async function untilRun(url: string, after: string | undefined, latencies: number[]): Promise<{ startedAt: string; result: string; atMs: number }> {
  const end = performance.now() + 300_000;
  while (performance.now() < end) {
    const t = performance.now();
    await fetch(`${url}/healthz`).then(async (r) => r.text());
    latencies.push(performance.now() - t);
    const status = (await (await fetch(`${url}/status`)).json()) as { lastRun?: { result?: string; startedAt?: string } | null };
    const run = status.lastRun;
    if (run?.result !== undefined && run.startedAt !== undefined && run.startedAt !== after)
      return { startedAt: run.startedAt, result: run.result, atMs: performance.now() };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("no run within 300 s");
}

const percentile = (xs: readonly number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? 0;

async function sopsRow(work: string): Promise<Record<string, unknown>> {
  const repo = path.join(work, "sops");
  await mkdir(path.join(repo, "config"), { recursive: true });
  await mkdir(path.join(repo, "secrets"));
  const junk = await junkSops(36_000);
  for (let i = 0; i < 4; i++) await writeFile(path.join(repo, `secrets/s${i}.enc.json`), junk);
  const refs = [0, 1, 2, 3].map((i) => `\${sops:s${i}.enc.json}`).join("-");
  await writeFile(
    path.join(repo, "config/key.yaml"),
    `${head}    note: x\nspec: { keyId: acme, org_id: acme, rate: 1, per: 60, hmac_enabled: true, hmac_string: "${refs}" }\n`,
  );
  await writeFile(
    path.join(repo, "gatesync.yaml"),
    'apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets:\n  gateway: { url: "http://127.0.0.1:1", credentialEnv: GW_KEY }\nstate: { backend: sqlite, path: ./state.db }\nsecrets: { fileRoot: ./secrets }\nschedule: { interval: 1h }\nserver: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }\n',
  );
  const key = await readFile(path.join(fixtures, "keys.txt"), "utf8");
  const started = performance.now();
  const daemon = await spawnDaemon(path.join(repo, "gatesync.yaml"), repo, { GW_KEY: "k", SOPS_AGE_KEY: key, SYNC_TOKEN: syncToken });
  try {
    const url = daemon.url;
    // the first run warms the process (modules loaded); the rows are runs asked through POST /sync after it
    const first = await untilRun(url, undefined, []);
    const latencies: number[] = [];
    const runMs: number[] = [];
    let last = first;
    for (let i = 0; i < 10; i++) {
      const asked = performance.now();
      await fetch(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
      last = await untilRun(url, last.startedAt, latencies);
      runMs.push(performance.now() - asked);
    }
    const result = last.result;
    const refusedMs = Math.max(...runMs);
    const codes = [...new Set(daemon.output().match(/SOPS_[A-Z_]+/g) ?? [])];
    const healthz = figure(latencies);
    log(
      `sops: run ${String(result)} after ${Math.round(refusedMs ?? -1)} ms, ${latencies.length} /healthz, p99 ${percentile(latencies, 99).toFixed(1)} ms, codes ${codes.join(",")}`,
    );
    return {
      files: 4,
      junkStanzasPerFile: 36_000,
      fileBytes: junk.length,
      runResult: result,
      codes,
      firstRunAfterStartMs: Math.round(first.atMs - started),
      runRefusedMs: figure(runMs),
      healthzAsked: latencies.length,
      healthzP99Ms: Math.round(percentile(latencies, 99) * 10) / 10,
      healthzMaxMs: Math.round(Math.max(...latencies) * 10) / 10,
      healthz,
      target: "p99 < 100 ms, refused in bounded time",
    };
  } finally {
    await stopDaemon(daemon);
  }
}

export async function boundsOnly(): Promise<void> {
  const startedMs = Date.now();
  const load = loadNow();
  const work = await mkdtemp(path.join(tmpdir(), "gatesync-bench-bounds-"));
  try {
    const yaml = await yamlRow(work);
    const sops = await sopsRow(work);
    const results = {
      ...resultsHead("bounds", load, startedMs),
      cli: cliArgs()[0] === "--import" ? "sources through tsx (dist/ stale)" : "dist/bundle",
      yaml,
      sops,
    };
    await writeFile(path.join(here, "results.bounds.json"), `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
