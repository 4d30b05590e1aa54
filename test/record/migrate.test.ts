import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { FileStateBackend } from "../../src/record/file-backend.js";
import { PostgresStateBackend } from "../../src/record/postgres-backend.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(async () => {
  await dropTestSchemas();
  await removeTempRepos();
});
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe("gatesync state migrate", () => {
  it("moves a state file to PostgreSQL and back, losing nothing", async () => {
    h = await harness();
    await h.apply();
    const original = await h.state.read();
    expect(original.resources.size).toBe(17);
    const schema = testSchema();
    const env = { ...h.env, GATESYNC_TEST_PG: pgUrl };
    const there = await runCli(["state", "migrate", "--from", `file:${path.join(h.dir, "state/state.json")}`, "--to", `postgres:GATESYNC_TEST_PG/${schema}`], env);
    expect(there.stderr).toBe("");
    expect(there.stdout).toContain(`migrated 17 records (serial ${original.serial}, lineage ${original.lineage})`);
    const inPostgres = new PostgresStateBackend({ url: pgUrl, schema });
    expect(await inPostgres.read()).toEqual(original);
    await inPostgres.close();

    const back = path.join(h.dir, "back/state.json");
    expect((await runCli(["state", "migrate", "--from", `postgres:GATESYNC_TEST_PG/${schema}`, "--to", `file:${back}`], env)).code).toBe(0);
    expect(await new FileStateBackend(back).read()).toEqual(original);

    // a target that is not empty is refused unless --force
    const again = await runCli(["state", "migrate", "--from", `file:${back}`, "--to", `postgres:GATESYNC_TEST_PG/${schema}`], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty: serial \d+, 17 records/);
    expect((await runCli(["state", "migrate", "--from", `file:${back}`, "--to", `postgres:GATESYNC_TEST_PG/${schema}`, "--force"], env)).code).toBe(0);
  });

  it("refuses a source that was never written (a mistyped path), creating nothing", async () => {
    const dir = await tempRepo();
    const target = path.join(dir, "target/state.json");
    const r = await runCli(["state", "migrate", "--from", `file:${path.join(dir, "typo/state.json")}`, "--to", `file:${target}`], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is empty: there is nothing to migrate");
    expect(existsSync(path.join(dir, "typo"))).toBe(false);
    expect(existsSync(path.join(dir, "target"))).toBe(false);
  });

  it("refuses unknown state names and unset variables", async () => {
    expect((await runCli(["state", "migrate", "--from", "s3://x", "--to", "file:/tmp/x"], {})).stderr).toMatch(/unknown state/);
    expect((await runCli(["state", "migrate", "--from", "postgres:NOPE", "--to", "file:/tmp/x"], {})).stderr).toMatch(/NOPE is not set/);
  });
});
