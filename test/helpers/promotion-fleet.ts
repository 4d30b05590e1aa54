/**
 * Two replicas of `gatesync run` (real processes) on one PostgreSQL database, a real git
 * repository, staging and production (promoted from staging) led by different replicas, one
 * sandbox each: what the fleet promotion tests share (test/fleet/promotion-*.e2e.test.ts).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { gitRemote, pushFiles } from "./git-remote.js";
import { acmeKey } from "./promotion-daemon.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "./postgres.js";
import { spawnReplica, untilWithLogs } from "./replica.js";
import type { Replica } from "./replica.js";
import { call, testCredentials, testSandbox } from "./sandbox.js";
import { removeTempRepos, tempRepo } from "./temp-repo.js";

export interface FleetStatus {
  fleet: { replica: string; leads: string[] };
}
export interface HistoryJson {
  runs: Array<{ outcome: string; commit?: string; replica: string }>;
  promotions: Array<{ revision: string; from: string; rollback: boolean; actor: { by: string } }>;
}

/** What a fleet promotion test starts (filled by startPromotionFleet), and the afterAll that ends all of it. */
export function fleetHoldings(): {
  readonly replicas: Replica[];
  readonly sandboxes: SandboxHandle[];
  readonly envSchemas: string[];
  readonly cleanUp: () => Promise<void>;
} {
  const replicas: Replica[] = [];
  const sandboxes: SandboxHandle[] = [];
  const envSchemas: string[] = [];
  const cleanUp = async (): Promise<void> => {
    for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
    for (const s of sandboxes) await s.stop();
    for (const s of envSchemas.splice(0)) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await dropTestSchemas();
    await removeTempRepos();
  };
  return { replicas, sandboxes, envSchemas, cleanUp };
}

export const promoteToken = "fleet-promote-token";
export const syncToken = "fleet-promotion-sync-token";

/** The org key `acme` at `rate`, as a commit's files. */
export const key = acmeKey;

/** How production is promoted and how often both replicas run on their own. */
export interface FleetPromotionOptions {
  readonly promotion: "manual" | "auto";
  readonly interval: string;
}

/** One replica's settings: both environments on the shared PostgreSQL state, its own git cache. */
const settings = (
  name: string,
  origin: string,
  schema: string,
  boxes: { staging: SandboxHandle; production: SandboxHandle },
  o: FleetPromotionOptions,
): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(origin)}, branch: main, subdirectory: config, cacheDir: ./cache-${name} } }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }
environments:
  staging:
    targets: { gateway: { url: ${boxes.staging.urls.gateway}, credentialEnv: GW_KEY } }
    soak: 1s
  production:
    targets: { gateway: { url: ${boxes.production.urls.gateway}, credentialEnv: GW_KEY } }
    track: { promotedFrom: staging }
    promotion: ${o.promotion}
schedule: { interval: ${o.interval}, jitter: 0 }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN, promoteTokenEnv: PROMOTE_TOKEN }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`;

/** The replicas' environment: the gateway key, the database and both tokens. */
export const fleetEnv = (): Record<string, string> => ({
  GATESYNC_LOG_LEVEL: "info",
  GW_KEY: testCredentials.gatewayKey,
  DATABASE_URL: pgUrl,
  SYNC_TOKEN: syncToken,
  PROMOTE_TOKEN: promoteToken,
});

export const fleetStatus = async (r: Replica): Promise<FleetStatus> => (await call(`${r.url}/status`)).body as FleetStatus;
export const rateIn = (box: SandboxHandle): unknown => box.inspect.store.orgKeys.get("org-acme")?.session.rate;
/** Writes (not GETs) a sandbox received for the org key. */
export const keyWrites = (box: SandboxHandle): number =>
  box.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET" && c.path.endsWith("/org-acme")).length;

export interface PromotionFleet {
  readonly staging: SandboxHandle;
  readonly production: SandboxHandle;
  readonly dir: string;
  /** A working copy of the origin, to push commits from. */
  readonly work: string;
  readonly a: Replica;
  readonly b: Replica;
  /** The replica that leads production, and the one that does not (it leads staging). */
  readonly leader: Replica;
  readonly other: Replica;
}

/** Where the caller keeps what `afterAll` must stop and drop. */
export interface FleetCleanup {
  readonly replicas: Replica[];
  readonly sandboxes: SandboxHandle[];
  readonly envSchemas: string[];
}

/**
 * Starts the sandboxes, the repository (its first commit: acme at 10) and both replicas, and
 * waits until each replica leads one environment.
 */
export async function startPromotionFleet(o: FleetPromotionOptions, keep: FleetCleanup): Promise<PromotionFleet> {
  const until = untilWithLogs(keep.replicas);
  const staging = await testSandbox();
  const production = await testSandbox();
  keep.sandboxes.push(staging, production);
  const dir = await tempRepo();
  const work = gitRemote(dir);
  await pushFiles(work, key(10), "acme at 10");
  const schema = testSchema();
  keep.envSchemas.push(`${schema}_staging`, `${schema}_production`);
  const origin = path.join(dir, "origin.git");
  for (const name of ["a", "b"]) await writeFile(path.join(dir, `${name}.yaml`), settings(name, origin, schema, { staging, production }, o));
  const a = spawnReplica("a", path.join(dir, "a.yaml"), dir, fleetEnv());
  keep.replicas.push(a);
  const b = spawnReplica("b", path.join(dir, "b.yaml"), dir, fleetEnv());
  keep.replicas.push(b);
  await until(() => a.url !== undefined && b.url !== undefined, Boolean, 60_000, "for both to listen");
  // two environments, two replicas: each leads one of them
  const leads = await until(
    async () => [(await fleetStatus(a)).fleet.leads, (await fleetStatus(b)).fleet.leads],
    ([x, y]) => x!.length === 1 && y!.length === 1,
    30_000,
    "for a 1/1 split",
  );
  const [leader, other] = leads[0]![0] === "production" ? [a, b] : [b, a];
  return { staging, production, dir, work, a, b, leader, other };
}
