/**
 * Growth from 10,000 to 100,000 resources (1,000 → 10,000 APIs, each its own document): the
 * floor, `gatesync validate`, a first `gatesync plan --dir` (empty state) and a first
 * `gatesync apply --dir` into the sandbox, each a spawned, cold process under /usr/bin/time.
 */
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { configFromDocument } from "../src/config/config.js";
import { openStateBackend } from "../src/record/open-backend.js";
import { startSandbox } from "../src/sandbox/sandbox.js";
import { credentials, env, log } from "./common.js";
import { cli, measureProcess, writeBenchConfig } from "./cold.js";
import type { ProcessSample } from "./cold.js";
import type { Generated } from "./generate.js";

const here = path.dirname(fileURLToPath(import.meta.url));


export interface ScaleFigures {
  readonly resources: number;
  readonly floor: ProcessSample;
  readonly validate: ProcessSample;
  readonly plan: ProcessSample;
  readonly apply: ProcessSample & { readonly applied: number };
}

/** Records the apply left in the config's state as applied. */
async function appliedRecords(configFile: string): Promise<number> {
  const config = configFromDocument(parse(await readFile(configFile, "utf8")) as Record<string, unknown>, configFile, path.dirname(configFile));
  const state = openStateBackend(config, env);
  try {
    return [...(await state.read()).resources.values()].filter((r) => r.status === "applied").length;
  } finally {
    await state.close();
  }
}

const sample = (s: ProcessSample): ProcessSample => ({ wallMs: s.wallMs, cpuMs: s.cpuMs, peakRssMb: Math.round(s.peakRssMb * 10) / 10 });

export async function scaleFigures(g: Generated, dir: string): Promise<ScaleFigures> {
  log(`[${g.count}] cold floor, validate, first plan`);
  const floor = sample(await measureProcess([path.join(here, "yaml-floor.mjs"), g.root], env));
  const validate = sample(await measureProcess([cli, "validate", g.root], env));
  const fixtures = { ...g.fixtures, apis: [...(g.fixtures.apis ?? []), { id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true }], keys: [{ key: env.BATCH_KEY, apis: ["gw-loopback"] }] };
  const sandbox = await startSandbox({ credentials, fixtures, logSize: 100 });
  try {
    const work = path.join(dir, "scale-state");
    await mkdir(work, { recursive: true });
    const config = await writeBenchConfig(work, sandbox.urls);
    const plan = sample(await measureProcess([cli, "plan", "-c", config, "--dir", g.root, "--format", "json"], env));
    log(`[${g.count}] first apply into the sandbox`);
    const run = await measureProcess([cli, "apply", "-c", config, "--dir", g.root, "--auto-approve"], env);
    const applied = await appliedRecords(config);
    return { resources: g.count, floor, validate, plan, apply: { ...sample(run), applied } };
  } finally {
    await sandbox.stop();
  }
}
