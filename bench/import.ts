/**
 * `BENCH_PARTS=import`: `gatesync import` of 10,000 objects, whole process (the built bundle),
 * against `gatesync validate` of the repository it writes (issue 58: ≤ 2×, peak RSS < 512 MiB).
 * The sources: a sync-tool dump of 2,500 OAS API files with its index, and saved answers of
 * 2,500 OAuth clients (one file per API), 2,500 organisation keys (one file each) and 2,500
 * portal products (one list) — every object a resource, every client and key a secret taken out
 * as a reference. Each rep imports into a fresh directory, then validates it. Writes
 * bench/results.import.json.
 *
 *   npm run build && BENCH_PARTS=import npx tsx bench/run.ts
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cli, measureProcess, processFigures } from "./cold.js";
import type { ProcessSample } from "./cold.js";
import { loadNow, log, quick } from "./common.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const perKind = 2500;

const document = (i: number): object => ({
  openapi: "3.0.3",
  info: { title: `API ${i}`, version: "1.0.0" },
  paths: {
    [`/items/{id}`]: {
      get: {
        operationId: `get${i}`,
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "the item" } },
      },
    },
  },
  "x-tyk-api-gateway": {
    info: { id: `api-${i}`, name: `API ${i}`, state: { active: true } },
    upstream: { url: `http://up-${i}.internal` },
    server: { listenPath: { value: `/api-${i}/`, strip: true } },
  },
});

/** The dump and answers directories of 10,000 objects. */
async function sources(dir: string): Promise<{ dump: string; answers: string }> {
  const dump = path.join(dir, "dump");
  const answers = path.join(dir, "answers");
  await mkdir(dump, { recursive: true });
  await mkdir(answers, { recursive: true });
  const files = Array.from({ length: perKind }, (_, i) => ({ file: `oas-api-${i}.json`, api_id: `api-${i}` }));
  await writeFile(path.join(dump, ".tyk.json"), JSON.stringify({ type: "apidef", files, policies: [], assets: [] }));
  for (let i = 0; i < perKind; i++) {
    await writeFile(path.join(dump, `oas-api-${i}.json`), JSON.stringify({ oas: document(i), categories: [], user_owners: [] }));
    await writeFile(
      path.join(answers, `oauth-clients-api-${i}.json`),
      JSON.stringify([
        {
          client_id: `client-${i}`,
          secret: `client-secret-${i}-0123456789`,
          redirect_uri: `https://app-${i}.example.com/cb`,
          policy_id: "default",
          meta_data: null,
          description: "",
        },
      ]),
    );
    await writeFile(
      path.join(answers, `org-key-org-${i}.json`),
      JSON.stringify({ org_id: `org-${i}`, rate: 100, per: 60, hmac_enabled: true, hmac_string: `hmac-${i}-0123456789abcdef`, quota_remaining: 5 }),
    );
  }
  await writeFile(
    path.join(answers, "products.json"),
    JSON.stringify(
      Array.from({ length: perKind }, (_, i) => ({
        ID: i + 1,
        Name: `product ${i}`,
        DisplayName: `Product ${i}`,
        APIDetails: [{ APIID: `api-${i}` }],
        Catalogues: [1],
      })),
    ),
  );
  return { dump, answers };
}

export async function importOnly(): Promise<void> {
  const load = loadNow();
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-import-"));
  try {
    const { dump, answers } = await sources(dir);
    const n = quick ? 3 : 5;
    const imports: ProcessSample[] = [];
    const validates: ProcessSample[] = [];
    for (let r = 0; r < n; r++) {
      const out = path.join(dir, `out-${r}`);
      const i = await measureProcess([cli, "import", out, "--sync-dump", dump, "--answers", answers, "--product-provider", "1", "--format", "json"], {});
      const imported = (JSON.parse(i.stdout) as { counts: { imported: number; errors: number } }).counts;
      if (imported.imported !== 4 * perKind || imported.errors !== 0) throw new Error(`imported ${JSON.stringify(imported)}`);
      const v = await measureProcess([cli, "validate", path.join(out, "config")], {});
      imports.push(i);
      validates.push(v);
      log(
        `[import] rep ${r + 1}/${n}: import ${Math.round(i.wallMs)} ms (${Math.round(i.peakRssMb)} MiB), validate ${Math.round(v.wallMs)} ms (${Math.round(v.peakRssMb)} MiB)`,
      );
      // each rep's output stays until the end: deleting 10,000 files between reps left ext4 scanning
      // its recently deleted inodes in the next import's file creation (1-1.5 s of system time, growing per rep)
    }
    const f = { import: processFigures(imports), validate: processFigures(validates) };
    const ratio = f.import.wallMs.median / f.validate.wallMs.median;
    // the machine is shared: CPU time (every thread) says what the work costs whatever else runs
    const cpuRatio = f.import.cpuMs.median / f.validate.cpuMs.median;
    const cell = (x: { median: number; min: number; max: number }, unit: string): string =>
      `${Math.round(x.median)} ${unit} (${Math.round(x.min)}–${Math.round(x.max)})`;
    const table = [
      `| ${(4 * perKind).toLocaleString("en")} objects (process) | wall, median (range) | CPU, median | peak RSS |`,
      "|---|---|---|---|",
      `| gatesync import (dump + saved answers) | ${cell(f.import.wallMs, "ms")} | ${cell(f.import.cpuMs, "ms")} | ${cell(f.import.peakRssMb, "MiB")} |`,
      `| gatesync validate of what it wrote | ${cell(f.validate.wallMs, "ms")} | ${cell(f.validate.cpuMs, "ms")} | ${cell(f.validate.peakRssMb, "MiB")} |`,
      `| import ÷ validate (limit 2×) | ${ratio.toFixed(2)}× | ${cpuRatio.toFixed(2)}× | limit 512 MiB |`,
    ].join("\n");
    process.stdout.write(`${table}\n\n${cpus().length} CPUs, load ${load.join(" ")} at the start\n`);
    await writeFile(
      path.join(here, "results.import.json"),
      `${JSON.stringify({ measuredAt: new Date().toISOString(), load, objects: 4 * perKind, ratio, cpuRatio, ...f }, null, 2)}\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
