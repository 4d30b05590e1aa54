/** Applying 1,000 gateway changes under a rate limit: batched, direct, and into the PostgreSQL state. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { Agent } from "undici";
import { runApply } from "../src/run/run-apply.js";
import type { GatesyncConfig } from "../src/config/config.js";
import { silentLogger } from "../src/logger.js";
import { SqliteStateBackend } from "../src/record/sqlite/sqlite-backend.js";
import { PostgresStateBackend } from "../src/record/postgres/postgres-backend.js";
import { startSandbox } from "../src/sandbox/sandbox.js";
import { RepositoryValidator } from "../src/validate/repository/repository-validator.js";
import { credentials, env, quick, reps } from "./common.js";
import { benchConfig } from "./daemon-runs.js";
import type { Figure } from "./figures.js";
import { figure } from "./figures.js";

/** PostgreSQL for the shared-state variant; the bench says so and goes on when it is down. */
export const databaseUrl = process.env.GATESYNC_BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

/** One short-lived connection for `work`. */
async function withPostgres<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const postgresReachable = (): Promise<boolean> => withPostgres(async () => Promise.resolve(true)).catch(() => false);
const dropSchema = (schema: string): Promise<unknown> => withPostgres((c) => c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`));

export async function applyUnderRateLimit(
  batch: boolean,
  count: number,
  backend: "sqlite" | "postgres" = "sqlite",
): Promise<{ seconds: Figure; calls: number }> {
  const samples: number[] = [];
  let calls = 0;
  const n = batch ? reps : quick ? 1 : 2;
  for (let rep = 0; rep < n; rep++) {
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-apply-"));
    const files: string[] = [];
    for (let i = 0; i < count; i++)
      files.push(`apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: key-${i} }\nspec: { keyId: key-${i}, rate: ${i}, per: 60 }\n`);
    await writeFile(path.join(dir, "keys.yaml"), files.join("---\n"));
    const sandbox = await startSandbox({
      credentials,
      fixtures: {
        apis: [{ id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true }],
        keys: [{ key: env.BATCH_KEY, apis: ["gw-loopback"] }],
      },
      faults: { latencyMs: 5, rateLimit: { requestsPerSecond: 100, burst: 10 }, interfaces: ["gateway"] },
      logSize: 100,
    });
    const base = benchConfig(dir, sandbox, "", { concurrency: 8, requestsPerSecond: 100 });
    const gateway = base.targets.gateway!;
    const config: GatesyncConfig = {
      ...base,
      source: { type: "directory", directory: dir, watch: false },
      targets: {
        gateway: batch ? gateway : { url: gateway.url, credentialEnv: gateway.credentialEnv, authScheme: gateway.authScheme, rateLimit: gateway.rateLimit },
      },
    };
    const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
    const schema = `gatesync_bench_${process.pid}_${rep}`;
    const state = backend === "sqlite" ? new SqliteStateBackend(path.join(dir, "state.db")) : new PostgresStateBackend({ url: databaseUrl, schema });
    const t = performance.now();
    const r = await runApply({ config, root: dir, validator: new RepositoryValidator(), state, env, logger: silentLogger(), dispatcher });
    // the executor's own time: load and plan are measured elsewhere
    const seconds = "summary" in r ? r.summary.durationMs / 1000 : (performance.now() - t) / 1000;
    if (!("summary" in r) || r.summary.applied.length !== count) throw new Error(`apply: ${JSON.stringify("summary" in r ? r.summary.failed.slice(0, 2) : r)}`);
    samples.push(seconds);
    calls = r.summary.calls.gateway;
    await state.close();
    if (backend === "postgres") await dropSchema(schema);
    await dispatcher.close();
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return { seconds: figure(samples), calls };
}
