/**
 * In-process figures: load+validate beside the same files parsed by `yaml` alone, the plan's
 * cost against a matching and a 1%-drifted state, and the peak memory of the pipeline.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { EnvFileSecretSource } from "../src/secrets/env-file-source.js";
import { SecretResolver } from "../src/secrets/resolver.js";
import { prepareDesired } from "../src/plan/prepare-desired.js";
import { computePlan } from "../src/plan/plan.js";
import { contentHash } from "../src/kinds/canonical.js";
import { appliedRecord } from "../src/apply/records/applied-record.js";
import type { StateSnapshot } from "../src/record/state.js";
import { RepositoryValidator } from "../src/validate/repository/repository-validator.js";
import { env, quick, repeat, reps, time } from "./common.js";
import type { Figure } from "./figures.js";
import { figure } from "./figures.js";
import type { Generated } from "./generate.js";
import { heldPayload } from "../src/record/wrappers/lazy-record.js";

const here = path.dirname(fileURLToPath(import.meta.url));

// ---- 1. load and validate vs the yaml floor ------------------------------------------------

export async function loadAndValidate(g: Generated): Promise<{ validate: Figure; floor: Figure }> {
  const secrets = { source: new EnvFileSecretSource(env, g.root), missing: "error" as const };
  const validate = await repeat(reps, async () => {
    // a fresh validator each time: its worker threads start cold, as in a new process
    const validator = new RepositoryValidator();
    try {
      return await time(async () => {
        const r = await validator.validate({ root: g.root, secrets });
        if (r.resources.length !== g.count)
          throw new Error(`expected ${g.count} resources, got ${r.resources.length}: ${JSON.stringify(r.diagnostics.slice(0, 3))}`);
      });
    } finally {
      await validator.close();
    }
  });
  const floor = await repeat(reps, () =>
    time(async () => {
      for (const f of g.files) for (const d of parseAllDocuments(await readFile(path.join(g.root, f), "utf8"))) d.toJS();
    }),
  );
  return { validate, floor };
}

// ---- 2. plan ----------------------------------------------------------------------------

export async function planCost(g: Generated): Promise<{ matching: Figure; onePercent: Figure }> {
  const secrets = new SecretResolver(new EnvFileSecretSource(env, g.root));
  const validator = new RepositoryValidator();
  const result = await validator.validate({ root: g.root, secrets: { source: secrets, missing: "error" } });
  await validator.close();
  const hashKey = "bench-hash-key";
  const appTypeProviders = new Set<number>();
  const now = "2026-11-21T00:00:00.000Z";
  const desired = prepareDesired(result.resources, { secrets, hashKey, appTypeProviders });
  const records = new Map(desired.desired.map((d) => [d.id, appliedRecord(d, undefined, { now, quotaReset: true })]));
  const matching: StateSnapshot = { lineage: "l", serial: 1, hashKey, resources: records };
  const changed = new Map(records);
  let k = 0;
  // 1% of the records as an older commit left them: another applied request, and its hash
  for (const [id, r] of records) {
    if (k++ % 100 !== 0) continue;
    const applied = { ...r.applied?.read(), changedOutside: true };
    changed.set(id, { ...r, applied: heldPayload(applied), appliedHash: contentHash(applied) });
  }
  const drifted: StateSnapshot = { ...matching, resources: changed };
  const planOnce = async (state: StateSnapshot, expectChanges: boolean): Promise<number> =>
    time(async () => {
      // a run of its own: its references looked up again (once each)
      const d = prepareDesired(result.resources, { secrets: new EnvFileSecretSource(env, g.root), hashKey, appTypeProviders });
      const plan = computePlan(d.desired, state, { orphans: "report", now, batch: { maxSize: 50 } });
      if (plan.summary.update > 0 !== expectChanges) throw new Error("unexpected plan");
      await Promise.resolve();
    });
  return { matching: await repeat(reps, () => planOnce(matching, false)), onePercent: await repeat(reps, () => planOnce(drifted, true)) };
}

// ---- 6. peak memory ------------------------------------------------------------------------

export async function peakRss(root: string): Promise<Figure> {
  // the compiled code, as production runs it (npm run bench builds first); a fresh process each
  // time, since the peak depends on when the collector runs
  const probe = path.join(here, "memory-probe.mjs");
  const samples: number[] = [];
  for (let rep = 0; rep < (quick ? 1 : 3); rep++) {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [probe, root], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
      let text = "";
      child.stdout.on("data", (b: Buffer) => (text += b.toString()));
      child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`memory probe exited ${code}`))));
    });
    samples.push((JSON.parse(out) as { peakRssMb: number }).peakRssMb);
  }
  return figure(samples);
}
