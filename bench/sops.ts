/**
 * `BENCH_PARTS=sops`: what `${sops:}` adds to a plan (issue 47: decrypting 1,000 references
 * across 50 SOPS files adds < 100 ms). 1,000 org keys each read their HMAC string through a
 * reference: from 50 SOPS files (copies of the sops-written fixture example.age.yaml, its data
 * key wrapped for the test age key: test/fixtures/sops/README.md), or — the baseline, the same
 * plan with the same values — from variables (each holds the plaintext of the leaf its SOPS
 * reference reads: both plans then warn alike about the fixture's short values, whose warnings
 * locate them in the 1,000-key file, ~0.5 s that is no part of decrypting). `gatesync plan` as a process
 * (the built bundle, as deployed), the two repositories alternating, and the same without the
 * age identity (the merge request's plan, values compared by their encrypted form). Writes
 * bench/results.sops.json.
 *
 *   npm run build && BENCH_PARTS=sops npx tsx bench/run.ts
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cli } from "./cold.js";
import { loadNow, log, quick } from "./common.js";
import { figure } from "./figures.js";
import type { Figure } from "./figures.js";
import { SopsFiles } from "../src/secrets/sops/sops-source.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, "../test/fixtures/sops");
const references = 1000;
const files = 50;
/** The values of example.age.yaml a reference reads (every leaf of the fixture). */
const leaves = [
  "myapp1",
  "app2.db.user",
  "app2.db.password",
  "app2.key",
  "number",
  "an_array.0",
  "an_array.1",
  "an_array.2",
  "an_array.3",
  "somebooleans.0",
  "somebooleans.1",
  "this.is.a.nested.value",
  "somelist_unencrypted.0",
  "somelist_unencrypted.1",
  "somelist_unencrypted.2",
  "nested_unencrypted.this.is.all",
];

const orgKey = (i: number, hmac: string): string =>
  `---\napiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: org-${i} }\nspec:\n  keyId: org-${i}\n  org_id: org-${i}\n  rate: 100\n  per: 60\n  hmac_enabled: true\n  hmac_string: "${hmac}"\n`;

/** A repository of 1,000 org keys whose HMAC strings come from `reference(i)`, and its config. */
async function repository(dir: string, reference: (i: number) => string): Promise<string> {
  await mkdir(path.join(dir, "config"), { recursive: true });
  await mkdir(path.join(dir, "secrets"), { recursive: true });
  await writeFile(path.join(dir, "config/keys.yaml"), Array.from({ length: references }, (_, i) => orgKey(i, reference(i))).join(""));
  const config = path.join(dir, "gatesync.yaml");
  await writeFile(
    config,
    `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: { gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY } }\nstate: { backend: sqlite, path: ./state.db }\nsecrets: { fileRoot: ./secrets, envPrefix: BENCH_S_ }\n`,
  );
  return config;
}

/** The plaintext of each of `leaves` in the fixture: the baseline's variables hold the same values. */
async function leafValues(): Promise<string[]> {
  const fixture = path.join(fixtures, "example.age.yaml");
  const files = new SopsFiles({ SOPS_AGE_KEY: await readFile(path.join(fixtures, "keys.txt"), "utf8") });
  return leaves.map((leaf) => {
    const found = files.value(fixture, "example.age.yaml", leaf.split("."));
    if (!found.ok) throw new Error(found.message);
    return found.value;
  });
}

const sopsFile = (i: number): string => `s${String(i % files).padStart(2, "0")}.enc.yaml`;
const leafOf = (i: number): string => leaves[Math.floor(i / files) % leaves.length]!;

const cpuAtExit = pathToFileURL(path.join(here, "cpu-at-exit.mjs")).href;

/** One `gatesync plan` process: its wall time and its CPU time, every thread's (ms); it must plan every key. */
async function plan(config: string, env: NodeJS.ProcessEnv): Promise<{ wall: number; cpu: number }> {
  const started = performance.now();
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const args = ["--import", cpuAtExit, cli, "plan", "--config", config, "--format", "json", "--allow-empty-state"];
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  const wall = performance.now() - started;
  if (out.code !== 0) throw new Error(`plan failed (${out.code}): ${out.stderr.slice(0, 400)}`);
  const created = (JSON.parse(out.stdout) as { summary: { create: number } }).summary.create;
  if (created !== references) throw new Error(`expected ${references} creates, got ${created}`);
  const cpu = Number(/bench-cpu-us (\d+)/.exec(out.stderr)?.[1] ?? Number.NaN) / 1000;
  return { wall, cpu };
}

/** Wall and CPU figures of the three plans, and what the SOPS ones add to the baseline run beside them. */
export interface SopsFigures {
  readonly wall: PlanFigures;
  readonly cpu: PlanFigures;
}

interface PlanFigures {
  readonly baseline: Figure;
  readonly sops: Figure;
  /** Each rep's sops plan minus the baseline plan run beside it. */
  readonly added: Figure;
  readonly keyless: Figure;
  readonly addedKeyless: Figure;
}

type Samples = Record<"baseline" | "sops" | "keyless", Array<{ wall: number; cpu: number }>>;

function figures(samples: Samples, of: "wall" | "cpu"): PlanFigures {
  const values = (k: keyof Samples): number[] => samples[k].map((s) => s[of]);
  const minus = (k: keyof Samples): number[] => values(k).map((v, i) => v - values("baseline")[i]!);
  return {
    baseline: figure(values("baseline")),
    sops: figure(values("sops")),
    added: figure(minus("sops")),
    keyless: figure(values("keyless")),
    addedKeyless: figure(minus("keyless")),
  };
}

export async function sopsFigures(): Promise<SopsFigures> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-sops-"));
  try {
    const sopsConfig = await repository(path.join(dir, "sops"), (i) => `\${sops:${sopsFile(i)}#${leafOf(i)}}`);
    for (let f = 0; f < files; f++) await copyFile(path.join(fixtures, "example.age.yaml"), path.join(dir, "sops/secrets", sopsFile(f)));
    const envConfig = await repository(path.join(dir, "env"), (i) => `\${env:BENCH_S_${i % files}_${Math.floor(i / files) % leaves.length}}`);
    const base = { ...process.env, HOME: dir, GW_KEY: "bench-gw", GATESYNC_HASH_KEY: "bench-hash-key-0123456789abcdef" };
    const values = await leafValues();
    const variables = Object.fromEntries(
      Array.from({ length: files * leaves.length }, (_, k) => [`BENCH_S_${k % files}_${Math.floor(k / files)}`, values[Math.floor(k / files)]!]),
    );
    const withKey = { ...base, SOPS_AGE_KEY: await readFile(path.join(fixtures, "keys.txt"), "utf8") };
    const n = quick ? 5 : 11;
    const samples: Samples = { baseline: [], sops: [], keyless: [] };
    // one warm-up of each (the file cache), then alternating
    await plan(envConfig, { ...base, ...variables });
    await plan(sopsConfig, withKey);
    for (let r = 0; r < n; r++) {
      samples.baseline.push(await plan(envConfig, { ...base, ...variables }));
      samples.sops.push(await plan(sopsConfig, withKey));
      samples.keyless.push(await plan(sopsConfig, base));
      const shown = (k: keyof Samples): string => `${k} ${Math.round(samples[k][r]!.wall)} ms (CPU ${Math.round(samples[k][r]!.cpu)} ms)`;
      log(`[sops] rep ${r + 1}/${n}: ${shown("baseline")}, ${shown("sops")}, ${shown("keyless")}`);
    }
    return { wall: figures(samples, "wall"), cpu: figures(samples, "cpu") };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `BENCH_PARTS=sops`: the row, printed and written to bench/results.sops.json. */
export async function sopsOnly(): Promise<void> {
  const load = loadNow();
  const f = await sopsFigures();
  const row = (name: string, of: (p: PlanFigures) => Figure): string => {
    const cell = (x: Figure): string => `${Math.round(x.median)} ms (${Math.round(x.min)}–${Math.round(x.max)})`;
    return `| ${name} | ${cell(of(f.wall))} | ${cell(of(f.cpu))} |`;
  };
  const table = [
    `| ${references.toLocaleString("en")} \`\${sops:}\` references across ${files} SOPS files, \`gatesync plan\` (process) | wall, median (range) | CPU, every thread |`,
    "|---|---|---|",
    row("baseline: the same plan, references from variables", (p) => p.baseline),
    row("with the age identity", (p) => p.sops),
    row("added by decrypting (limit 100 ms)", (p) => p.added),
    row("without the identity (merge request)", (p) => p.keyless),
    row("added without the identity", (p) => p.addedKeyless),
  ].join("\n");
  process.stdout.write(`${table}\n\n${cpus().length} CPUs, load ${load.join(" ")} at the start\n`);
  await writeFile(path.join(here, "results.sops.json"), `${JSON.stringify({ measuredAt: new Date().toISOString(), load, ...f }, null, 2)}\n`);
}
