/**
 * Ownership on a PostgreSQL state (docs/user/teams.md): the registry in the state's database,
 * shared by every environment and team. Forty environments of one config overlapping on
 * `OrgKey/acme`, applied at once, end with one owner, one write and 39 refusals, the value the
 * owner's; two teams creating one new object at once end with one object and one owner.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { testCredentials } from "../helpers/sandbox.js";
import { tempRepo } from "../helpers/temp-repo.js";
import { orgKey } from "../helpers/resources.js";
import { orgKeysOf, teamConfig, writeTeam } from "./teams-helpers.js";
import { sharedTeamGateway } from "./team-gateway.js";

const gateway = sharedTeamGateway();
const env = { GW_KEY: testCredentials.gatewayKey, PG_URL: pgUrl, GATESYNC_LOG_LEVEL: "error" };

const apply = (config: string, ...more: string[]): ReturnType<typeof runCli> =>
  runCli(["apply", "-c", config, "--auto-approve", "--allow-empty-state", ...more], env);

interface Row {
  readonly object: string;
  readonly owner: string;
  readonly environment: string;
}

/**
 * Applies each environment, `at` at once (the machine's PostgreSQL takes ~100 connections, and
 * each CLI process opens its own pools: issue 57 shares them in a daemon).
 */
async function applyAll(config: string, names: readonly string[], at = 5): Promise<Array<Awaited<ReturnType<typeof runCli>>>> {
  const out: Array<Awaited<ReturnType<typeof runCli>>> = [];
  for (let i = 0; i < names.length; i += at) out.push(...(await Promise.all(names.slice(i, i + at).map((n) => apply(config, "--env", n)))));
  return out;
}

const rowsOf = (object: string): Promise<Row[]> =>
  sql<Row>("SELECT object, owner, environment FROM gatesync_ownership.owners WHERE url = $1 AND object = $2", [
    gateway.sandbox.urls.gateway.replace(/\/$/, ""),
    object,
  ]);

describe("ownership on PostgreSQL", () => {
  it("40 environments overlapping on one org key: 1 owner, 1 write, 39 refusals, the owner's value", async () => {
    const dir = await tempRepo({ "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-40", rate: "${var:rate}", per: 60 }) });
    const names = Array.from({ length: 40 }, (_, i) => `e${i}`);
    const schema = testSchema();
    // each environment's state is its own schema (namespaced): register them for the clean-up
    const schemas = names.map((n) => `${schema}_${n}`);
    const environments = names.map((n, i) => `  ${n}:\n    values: { rate: ${100 + i} }`).join("\n");
    const config = path.join(dir, "gatesync.yaml");
    await writeFile(config, teamConfig("x", gateway.sandbox, { schema, extra: `environments:\n${environments}` }));
    try {
      const runs = await applyAll(config, names);
      const refused = runs.filter((r) => (r.stdout + r.stderr).includes("OWNED_ELSEWHERE: OrgKey/acme (org-key:acme-40 on gateway"));
      expect(refused).toHaveLength(39);
      const rows = await rowsOf("org-key:acme-40");
      expect(rows).toHaveLength(1);
      const owner = rows[0]!;
      expect(owner.owner).toBe(owner.environment);
      const key = orgKeysOf(gateway.sandbox).get("acme-40");
      expect(key?.writes).toBe(1);
      expect(key?.session.rate).toBe(100 + Number(owner.environment.slice(1)));
      // every refusal names the one owner
      for (const r of refused) expect(r.stdout + r.stderr).toContain(`is owned by team ${owner.owner} (environment ${owner.environment})`);
      // scheduled again, the same: nobody re-asserts over the owner
      const again = await applyAll(config, names);
      // what the runs that were not refused printed: the owner's "No changes" alone (a failure shows the others' output)
      const unrefused = again.map((r) => r.stdout + r.stderr).filter((out) => !out.includes("OWNED_ELSEWHERE"));
      expect(unrefused).toEqual([expect.stringContaining("No changes")]);
      expect(orgKeysOf(gateway.sandbox).get("acme-40")?.writes).toBe(1);
    } finally {
      for (const s of schemas) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    }
  }, 120_000);

  it("two teams creating one new object at once: one object, one owner, the loser refused before any call", async () => {
    const dir = await tempRepo();
    const files = (rate: number): Record<string, string> => ({ "new.yaml": orgKey({ name: "fresh", keyId: "fresh-race", rate, per: 60 }) });
    const a = await writeTeam(dir, "a", teamConfig("a", gateway.sandbox, { owner: "team-a", schema: testSchema() }), files(1));
    const b = await writeTeam(dir, "b", teamConfig("b", gateway.sandbox, { owner: "team-b", schema: testSchema() }), files(2));
    const [ra, rb] = await Promise.all([apply(a), apply(b)]);
    const rows = await rowsOf("org-key:fresh-race");
    expect(rows).toHaveLength(1);
    const winner = rows[0]!.owner;
    const loser = winner === "team-a" ? rb : ra;
    expect(loser.stdout + loser.stderr).toContain(`is owned by team ${winner}`);
    const key = orgKeysOf(gateway.sandbox).get("fresh-race");
    expect(key?.writes).toBe(1);
    expect(key?.session.rate).toBe(winner === "team-a" ? 1 : 2);
  }, 60_000);
});
