/**
 * `gatesync state migrate` between the old file format (read only), SQLite and PostgreSQL, and
 * the refusal to start an empty state beside an old one.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PostgresStateBackend } from "../../src/record/postgres/postgres-backend.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { StateSnapshot } from "../../src/record/state.js";
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

/**
 * Writes `s` the way the retired file backend left it: the first records folded into state.json
 * (or only its .bak, as a compaction killed between its renames left it), the rest as journal
 * lines, the last of them torn and glued to the next one as a later writer appended after it.
 */
async function writeOldFormat(file: string, s: StateSnapshot, opts: { onlyBak?: boolean } = {}): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const records = [...s.resources.values()];
  const folded = records.slice(0, 5);
  const base = {
    formatVersion: 1,
    lineage: s.lineage,
    serial: 5,
    ...(s.hashKey === undefined ? {} : { hashKey: s.hashKey }),
    resources: Object.fromEntries(folded.map((r) => [r.id, r])),
  };
  await writeFile(opts.onlyBak === true ? `${file}.bak` : file, JSON.stringify(base, null, 2));
  const lines = records.slice(5).map((record, i) => JSON.stringify({ serial: 6 + i, op: "write", record }));
  // a torn line (the write in flight when a process died), with the next entry glued to it
  const torn = `${JSON.stringify({ serial: 6 + lines.length, op: "write", record: records[0] }).slice(0, 40)}`;
  const last = lines.pop()!;
  await writeFile(`${file}.journal`, `${lines.join("\n")}\n${torn}${last}\n${torn}`);
}

const sameState = (a: StateSnapshot, b: StateSnapshot): void => {
  expect({ ...b, serial: 0 }).toEqual({ ...a, serial: 0 });
};

describe("gatesync state migrate", () => {
  it("moves an old state file to SQLite, then to PostgreSQL and back, losing nothing", async () => {
    h = await harness();
    await h.apply();
    const original = await h.state.read();
    expect(original.resources.size).toBe(17);
    const old = path.join(h.dir, "old/state.json");
    await writeOldFormat(old, original);
    const db = path.join(h.dir, "moved/state.db");
    const moved = await runCli(["state", "migrate", "--from", `file:${old}`, "--to", `sqlite:${db}`], {});
    expect(moved.stderr).toBe("");
    expect(moved.stdout).toContain(`migrated 17 records`);
    const inSqlite = new SqliteStateBackend(db);
    sameState(original, await inSqlite.read());
    await inSqlite.close();

    const schema = testSchema();
    const env = { GATESYNC_TEST_PG: pgUrl };
    expect((await runCli(["state", "migrate", "--from", `sqlite:${db}`, "--to", `postgres:GATESYNC_TEST_PG/${schema}`], env)).code).toBe(0);
    const inPostgres = new PostgresStateBackend({ url: pgUrl, schema });
    const there = await inPostgres.read();
    await inPostgres.close();
    sameState(original, there);
    const back = path.join(h.dir, "back/state.db");
    expect((await runCli(["state", "migrate", "--from", `postgres:GATESYNC_TEST_PG/${schema}`, "--to", `sqlite:${back}`], env)).code).toBe(0);
    const backed = new SqliteStateBackend(back);
    expect(await backed.read()).toEqual(there);
    await backed.close();

    // a target that is not empty is refused unless --force
    const again = await runCli(["state", "migrate", "--from", `sqlite:${back}`, "--to", `postgres:GATESYNC_TEST_PG/${schema}`], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty: serial \d+, 17 records/);
    expect((await runCli(["state", "migrate", "--from", `sqlite:${back}`, "--to", `postgres:GATESYNC_TEST_PG/${schema}`, "--force"], env)).code).toBe(0);
  });

  it("recovers an old state a crashed compaction left as .bak plus journal", async () => {
    h = await harness();
    await h.apply();
    const original = await h.state.read();
    const old = path.join(h.dir, "old/state.json");
    await writeOldFormat(old, original, { onlyBak: true });
    const db = path.join(h.dir, "moved.db");
    expect((await runCli(["state", "migrate", "--from", `file:${old}`, "--to", `sqlite:${db}`], {})).code).toBe(0);
    const moved = new SqliteStateBackend(db);
    sameState(original, await moved.read());
    await moved.close();
  });

  it("stops a run that finds an old state.json where the database would be, saying the exact command", async () => {
    h = await harness();
    const old = path.join(h.dir, "state/state.json");
    await writeOldFormat(old, {
      lineage: "l",
      serial: 6,
      hashKey: undefined,
      resources: new Map([["OrgKey/a", { id: "OrgKey/a", kind: "OrgKey", name: "a", address: {}, status: "applied", createdAt: "t", updatedAt: "t" }]]),
    });
    for (const command of [["plan"], ["apply", "--auto-approve"]]) {
      const r = await runCli([...command, "--config", path.join(h.dir, "gatesync.yaml")], h.env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `error[STATE_OLD_FORMAT] ${old}: an old gatesync state (${old}) lies where the state database ${path.join(h.dir, "state/state.db")} would be`,
      );
      expect(r.stderr).toContain(`gatesync state migrate --from file:${old} --to sqlite:${path.join(h.dir, "state/state.db")}`);
    }
    expect(existsSync(path.join(h.dir, "state/state.db"))).toBe(false);
    expect(h.sandbox.inspect.calls().log.filter((c) => !c.internal)).toEqual([]);
  });

  it("refuses the retired `backend: file` with the command that moves it", async () => {
    const dir = await tempRepo({
      "gatesync.yaml":
        "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: { portal: { url: http://127.0.0.1:1/portal, credentialEnv: P_KEY } }\nstate: { backend: file, path: ./s/state.json }\n",
      "config/.keep": "",
    });
    const r = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml")], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("`state: { backend: file }` is retired");
    expect(r.stderr).toContain(`gatesync state migrate --from file:${path.join(dir, "s/state.json")} --to sqlite:${path.join(dir, "s/state.db")}`);
  });

  it("refuses a source that was never written (a mistyped path), creating nothing", async () => {
    const dir = await tempRepo();
    for (const from of [`file:${path.join(dir, "typo/state.json")}`, `sqlite:${path.join(dir, "typo/state.db")}`]) {
      const r = await runCli(["state", "migrate", "--from", from, "--to", `sqlite:${path.join(dir, "target/state.db")}`], {});
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("is empty: there is nothing to migrate");
    }
    expect(existsSync(path.join(dir, "typo"))).toBe(false);
    expect(existsSync(path.join(dir, "target"))).toBe(false);
  });

  it("refuses unknown state names and unset variables", async () => {
    expect((await runCli(["state", "migrate", "--from", "s3://x", "--to", "sqlite:/tmp/x"], {})).stderr).toMatch(/unknown state/);
    expect((await runCli(["state", "migrate", "--from", "postgres:NOPE", "--to", "sqlite:/tmp/x"], {})).stderr).toMatch(/NOPE is not set/);
  });
});
