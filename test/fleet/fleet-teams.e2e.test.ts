/**
 * A fleet serving two teams (docs/user/teams.md, docs/user/fleets.md): two replicas of
 * `gatesync run` (real processes) on one PostgreSQL database, one operator config whose two
 * environments each follow their team's own git repository (`source:` per environment) and
 * write to one shared sandbox gateway. The replicas split the environments, one each; a team's
 * commit runs only its own environment; billing's change of payments' org key is refused in
 * billing's run on the replica that leads billing, while payments is led (and its next commit
 * applied) by the other; payments' value stays, billing's own keys are applied, and the registry
 * holds one owner per object.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { gitRemote, pushFiles } from "../helpers/git-remote.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { orgKey } from "../helpers/resources.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { startReplica, untilWithLogs } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { orgKeysOf } from "../teams/teams-helpers.js";

const replicas: Replica[] = [];
let sandbox: SandboxHandle | undefined;

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  await sandbox?.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

const until = untilWithLogs(replicas);

interface Team {
  readonly origin: string;
  push(files: Record<string, string>, message: string): Promise<string>;
}

async function team(files: Record<string, string>): Promise<Team> {
  const dir = await tempRepo();
  const work = gitRemote(dir);
  const push = (f: Record<string, string>, message: string): Promise<string> => pushFiles(work, f, message);
  await push(files, "initial");
  return { origin: path.join(dir, "origin.git"), push };
}

const entry = (name: string, t: Team): string => `  ${name}-prod:
    owner: ${name}
    source: { git: { url: ${JSON.stringify(t.origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
    state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${testSchema()} }`;

/** How many runs of `environment` the replicas' logs started (a skipped run starts none). */
const runsOf = (environment: string): number =>
  replicas.flatMap((r) => r.log.split("\n")).filter((l) => l.includes('"msg":"run started"') && l.includes(`"environment":"${environment}"`)).length;

/** The runs of `environment` once no new one started for 1.5 s (several loop intervals). */
async function steadyRuns(environment: string): Promise<number> {
  for (;;) {
    const before = runsOf(environment);
    await sleep(1_500);
    if (runsOf(environment) === before) return before;
  }
}

/** Whether the replica finished a run of `environment` since it last acquired its lease. */
function ranSinceLease(r: Replica, environment: string): boolean {
  const lines = r.log.split("\n").filter((l) => l.includes(`"environment":"${environment}"`));
  const acquired = lines.findLastIndex((l) => l.includes('"msg":"fleet: lease acquired"'));
  return acquired >= 0 && lines.slice(acquired).some((l) => l.includes('"msg":"run finished"'));
}

interface FleetStatus {
  fleet: { leads: string[] };
}
const leads = async (r: Replica): Promise<string[]> => ((await call(`${r.url}/status`)).body as FleetStatus).fleet.leads;

describe("a fleet of two replicas serving two teams' repositories", () => {
  it("runs each team's commit only in its environment, and refuses across replicas what the other team owns", async () => {
    sandbox = await testSandbox();
    const s = sandbox;
    const payments = await team({ "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-f", rate: 100, per: 60 }) });
    const billing = await team({ "config/own.yaml": orgKey({ name: "own", keyId: "billing-f", rate: 5, per: 60 }) });
    const config = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(payments.origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${testSchema()} }
targets:
  gateway: { url: ${s.urls.gateway}, credentialEnv: GW_KEY }
environments:
${entry("payments", payments)}
${entry("billing", billing)}
schedule: { interval: 500ms, jitter: 0 }
server: { listen: "127.0.0.1:0" }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`;
    // each replica its own directory (its own git caches), the same config
    const env = { GATESYNC_LOG_LEVEL: "info", GW_KEY: testCredentials.gatewayKey, DATABASE_URL: pgUrl };
    for (const name of ["a", "b"]) {
      const dir = await tempRepo();
      await mkdir(path.join(dir, "operator"));
      await writeFile(path.join(dir, "operator", "gatesync.yaml"), config);
      startReplica(replicas, name, path.join(dir, "operator"), env);
    }
    const [a, b] = replicas as [Replica, Replica];
    await until(() => a.url !== undefined && b.url !== undefined, Boolean, 60_000, "for both to listen");
    const split = await until(
      async () => [await leads(a), await leads(b)],
      ([x, y]) => x!.length === 1 && y!.length === 1,
      30_000,
      "for one environment each",
    );
    expect(split.flat().sort()).toEqual(["billing-prod", "payments-prod"]);
    await until(
      () => orgKeysOf(s).get("acme-f")?.session.rate === 100 && orgKeysOf(s).get("billing-f")?.session.rate === 5,
      Boolean,
      30_000,
      "the first applies",
    );

    // each leader's first run of the environment it leads is done (a new leader runs once)
    await until(
      async () => (await Promise.all([a, b].map(async (r) => (await leads(r)).every((e) => ranSinceLease(r, e))))).every(Boolean),
      Boolean,
      30_000,
      "the leaders' first runs",
    );

    // billing's commit: payments' key, and a new key of its own — only billing's environment runs
    const paymentsRuns = await steadyRuns("payments-prod");
    await billing.push(
      {
        "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-f", rate: 777, per: 60 }),
        "config/more.yaml": orgKey({ name: "more", keyId: "more-f", rate: 6, per: 60 }),
      },
      "billing writes payments' key",
    );
    await until(
      () => orgKeysOf(s).get("more-f")?.session.rate,
      (r) => r === 6,
      30_000,
      "billing's own new key",
    );
    const refusal = `OWNED_ELSEWHERE: OrgKey/acme (org-key:acme-f on gateway ${s.urls.gateway.replace(/\/$/, "")}) is owned by team payments (environment payments-prod)`;
    const billingLeader = (await leads(a)).includes("billing-prod") ? a : b;
    await until(
      () => billingLeader.log,
      (l) => l.includes(refusal),
      10_000,
      "billing's refusal",
    );
    await sleep(1_500); // several loop intervals on both replicas
    expect(orgKeysOf(s).get("acme-f")).toMatchObject({ session: { rate: 100 }, writes: 1 });
    expect(runsOf("payments-prod")).toBe(paymentsRuns);

    // payments' commit: only payments' environment runs, and its value is the one on the gateway
    // a run that claimed (billing's new key) is planned once more at the next tick: its registry rows were read before it claimed
    const billingRuns = await steadyRuns("billing-prod");
    await payments.push({ "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-f", rate: 150, per: 60 }) }, "payments raises acme");
    await until(
      () => orgKeysOf(s).get("acme-f")?.session.rate,
      (r) => r === 150,
      30_000,
      "payments' change",
    );
    await sleep(1_500);
    expect(runsOf("billing-prod")).toBe(billingRuns);
    expect(orgKeysOf(s).get("acme-f")).toMatchObject({ session: { rate: 150 }, writes: 2 });
    const owners = await sql<{ object: string; owner: string; environment: string }>(
      "SELECT object, owner, environment FROM gatesync_ownership.owners WHERE url = $1 ORDER BY object",
      [s.urls.gateway.replace(/\/$/, "")],
    );
    expect(owners.map((o) => `${o.object} ${o.owner} ${o.environment}`)).toEqual([
      "org-key:acme-f payments payments-prod",
      "org-key:billing-f billing billing-prod",
      "org-key:more-f billing billing-prod",
    ]);
  }, 150_000);
});
