/**
 * An apply's claim is written in the same transaction as the record that claims it
 * (docs/user/teams.md, StateBackend.writeClaiming), on a real SQLite state (the registry's file
 * attached to the state's) and a real PostgreSQL one (the state's own connection): a failure of
 * the record's write — injected by a trigger on the state's table, after the claim's insert in
 * that transaction — leaves no claim, no record and no call; the next apply claims and records
 * the object once. A claim written in a transaction of its own would outlive the failed write
 * and leave the object owned by an environment that never recorded it.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { orgKey } from "../helpers/resources.js";
import { testCredentials } from "../helpers/sandbox.js";
import { tempRepo } from "../helpers/temp-repo.js";
import { orgKeysOf, teamConfig, writeTeam } from "./teams-helpers.js";
import { sharedTeamGateway } from "./team-gateway.js";

const gateway = sharedTeamGateway();
const env = { GW_KEY: testCredentials.gatewayKey, PG_URL: pgUrl, GATESYNC_LOG_LEVEL: "error" };

const apply = (config: string): ReturnType<typeof runCli> => runCli(["apply", "-c", config, "--auto-approve", "--allow-empty-state"], env);

/** The registry's rows of this team's objects (a PostgreSQL registry is the whole database's). */
async function claimed(config: string, team: string): Promise<string[]> {
  const listed = await runCli(["ownership", "list", "-c", config, "--format", "json"], env);
  expect(listed.stderr).toBe("");
  return (JSON.parse(listed.stdout) as Array<{ object: string; owner: string }>)
    .filter((r) => r.object.startsWith(`org-key:${team}`))
    .map((r) => `${r.object} ${r.owner}`);
}

async function recordIds(config: string): Promise<string[]> {
  const shown = await runCli(["state", "list", "-c", config, "--json"], env);
  return (JSON.parse(shown.stdout) as { resources: Array<{ id: string }> }).resources.map((r) => r.id).sort();
}

interface Backend {
  readonly name: string;
  config(team: string): string;
  /** Makes the state refuse to insert `id`'s record (after the seed apply made its tables), or lifts it. */
  inject(root: string, id: string | undefined): Promise<void>;
}

const schema = testSchema();
const backends: Backend[] = [
  {
    name: "SQLite (the registry attached to the state)",
    config: (team) => teamConfig(team, gateway.sandbox, { owner: team }),
    inject: (root, id) => {
      const db = new Database(path.join(root, "states", "atomic-sqlite.db"));
      try {
        db.exec("DROP TRIGGER IF EXISTS inject");
        if (id !== undefined)
          db.exec(`CREATE TRIGGER inject BEFORE INSERT ON resources WHEN NEW.id = '${id}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
      } finally {
        db.close();
      }
      return Promise.resolve();
    },
  },
  {
    name: "PostgreSQL (the state's connection)",
    config: (team) => teamConfig(team, gateway.sandbox, { owner: team, schema }),
    inject: async (_root, id) => {
      await sql(`DROP TRIGGER IF EXISTS inject ON ${schema}.resources`);
      if (id === undefined) return;
      await sql(`CREATE OR REPLACE FUNCTION ${schema}.inject() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.id = '${id}' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`);
      await sql(`CREATE TRIGGER inject BEFORE INSERT ON ${schema}.resources FOR EACH ROW EXECUTE FUNCTION ${schema}.inject()`);
    },
  },
];

describe.each(backends)("a claim and its record on $name", (backend) => {
  it("a failed record write leaves no claim, no record and no call; the next apply claims and records it once", async () => {
    const root = await tempRepo();
    const team = backend.name.startsWith("SQLite") ? "atomic-sqlite" : "atomic-pg";
    const keyId = `${team}-key`;
    const seed = orgKey({ name: `${team}-seed`, rate: 1, per: 60 });
    const config = await writeTeam(root, team, backend.config(team), { "seed.yaml": seed });
    expect((await apply(config)).code).toBe(0);
    expect(await claimed(config, team)).toEqual([`org-key:${team}-seed ${team}`]);

    await backend.inject(root, `OrgKey/${keyId}`);
    await writeTeam(root, team, backend.config(team), { "seed.yaml": seed, "key.yaml": orgKey({ name: keyId, rate: 7, per: 60 }) });
    const failed = await apply(config);
    expect(failed.code).not.toBe(0);
    expect(failed.stdout + failed.stderr).toContain("injected failure");
    // the claim went with its record: neither is there, and nothing was sent
    expect(await claimed(config, team)).toEqual([`org-key:${team}-seed ${team}`]);
    expect(await recordIds(config)).toEqual([`OrgKey/${team}-seed`]);
    expect(orgKeysOf(gateway.sandbox).get(keyId)).toBeUndefined();

    await backend.inject(root, undefined);
    expect((await apply(config)).code).toBe(0);
    expect(await claimed(config, team)).toEqual([`org-key:${keyId} ${team}`, `org-key:${team}-seed ${team}`]);
    expect(await recordIds(config)).toEqual([`OrgKey/${keyId}`, `OrgKey/${team}-seed`]);
    expect(orgKeysOf(gateway.sandbox).get(keyId)?.writes).toBe(1);
  });
});
