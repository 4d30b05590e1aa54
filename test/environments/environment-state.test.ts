/**
 * Each environment's own state, on SQLite and PostgreSQL, and the move of a single-environment
 * state into an environment: the command plan's note names, followed as printed, leaves that
 * environment's re-plan empty and the other environment untouched.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let staging: SandboxHandle;
let production: SandboxHandle;

beforeAll(async () => {
  staging = await testSandbox();
  production = await testSandbox();
});
afterAll(async () => {
  await staging.stop();
  await production.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

const env = { GW: testCredentials.gatewayKey, PG_URL: pgUrl };
const key = doc("OrgKey", "acme", "keyId: org-acme-state\nrate: ${var:rate}");

const head = (state: string): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
state: ${state}
`;

const environments = (): string => `environments:
  staging:
    targets: { gateway: { url: ${staging.urls.gateway}, credentialEnv: GW } }
    values: { rate: 10 }
  production:
    targets: { gateway: { url: ${production.urls.gateway}, credentialEnv: GW } }
    values: { rate: 20 }
`;

/** Splits a command line as printed between backquotes (no quoting in it). */
const commandIn = (text: string): string[] => {
  const m = /`gatesync (state move-to-env [^`]+)`/.exec(text);
  if (m === null) throw new Error(`no move-to-env command in: ${text}`);
  return m[1]!.split(" ");
};

describe("the state of each environment", () => {
  it("moves a single-environment state into an environment with the command plan's note prints", async () => {
    const dir = await tempRepo({ "config/key.yaml": key });
    const config = path.join(dir, "gatesync.yaml");
    await writeFile(
      config,
      `${head("{ backend: sqlite, path: ./state/state.db }")}targets: { gateway: { url: ${staging.urls.gateway}, credentialEnv: GW } }\nvalues: { rate: 10 }\n`,
    );
    expect((await runCli(["apply", "-c", config, "--auto-approve", "--allow-empty-state"], env)).code).toBe(0);
    expect((await runCli(["plan", "-c", config, "--detailed-exitcode"], env)).code).toBe(0);

    await writeFile(config, `${head("{ backend: sqlite, path: ./state/state.db }")}${environments()}`);
    const all = await runCli(["plan", "-c", config], env);
    expect(all.stderr).toContain(`[staging] note: the state of this repository's single-environment days`);
    expect(all.stderr).toContain("`gatesync state move-to-env staging -c ");
    const before = await runCli(["plan", "-c", config, "--env", "staging", "--detailed-exitcode"], env);
    // the single-environment days' claims are still the implicit environment's (docs/user/teams.md): refused until moved
    expect(before.code).toBe(3);
    expect(before.stdout).toContain("is owned by team default (environment default)");
    expect(before.stderr).toContain("note: the state of this repository's single-environment days");
    const moved = await runCli(commandIn(before.stderr), env);
    expect(moved.stderr).toBe("");
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain("migrated 1 records");
    expect(moved.stdout).toContain("1 objects of the ownership registry are now environment staging's");
    expect(existsSync(path.join(dir, "state/state.staging.db"))).toBe(true);

    const after = await runCli(["plan", "-c", config, "--env", "staging", "--detailed-exitcode"], env);
    expect(after.stderr).toBe("");
    expect(after.code).toBe(0);
    // production's state is its own, still empty
    const prod = await runCli(["plan", "-c", config, "--env", "production", "--detailed-exitcode"], env);
    expect(prod.code).toBe(2);
    expect(prod.stdout).toContain("Plan: 1 to create");
    // moved once: a second move refuses to replace the environment's state
    const again = await runCli(commandIn(before.stderr), env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("is not empty");
  });

  it("keeps PostgreSQL environments in schemas of their own: one apply never touches the other's records", async () => {
    const schema = testSchema();
    testSchemaAlso(`${schema}_staging`, `${schema}_production`);
    const dir = await tempRepo({ "config/key.yaml": key });
    const config = path.join(dir, "gatesync.yaml");
    await writeFile(config, `${head(`{ backend: postgres, urlEnv: PG_URL, schema: ${schema} }`)}${environments()}`);
    expect((await runCli(["apply", "-c", config, "--env", "staging", "--auto-approve", "--allow-empty-state"], env)).code).toBe(0);
    const count = async (s: string): Promise<number> => Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM ${s}.resources`))[0]!.n);
    expect(await count(`${schema}_staging`)).toBe(1);
    const productionTables = await sql(`SELECT 1 FROM information_schema.tables WHERE table_schema = $1`, [`${schema}_production`]);
    expect(productionTables).toEqual([]);
    expect((await runCli(["apply", "-c", config, "--env", "production", "--auto-approve", "--allow-empty-state"], env)).code).toBe(0);
    expect(await count(`${schema}_production`)).toBe(1);
    for (const e of ["staging", "production"]) expect((await runCli(["plan", "-c", config, "--env", e, "--detailed-exitcode"], env)).code).toBe(0);
    const rates = (s: SandboxHandle): string =>
      JSON.stringify((s.inspect.objects() as { orgKeys?: unknown[] }).orgKeys?.filter((k) => JSON.stringify(k).includes("org-acme-state")));
    expect(rates(staging)).toContain('"rate":10');
    expect(rates(production)).toContain('"rate":20');
  });
});

/** Schemas made by the config's namespacing, dropped with the test's own. */
function testSchemaAlso(...names: string[]): void {
  afterAll(async () => {
    for (const n of names) await sql(`DROP SCHEMA IF EXISTS ${n} CASCADE`);
  });
}
