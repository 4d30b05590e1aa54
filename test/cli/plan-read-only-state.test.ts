/**
 * A merge-request plan straight from the shared PostgreSQL state with a role that can only
 * read it (`plan --state postgres:VARIABLE/schema`): the plan is the daemon's, and the role
 * could not write if it tried.
 */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, postgresBackend, sql, testSchema } from "../helpers/postgres.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

const role = `gs_ro_${randomBytes(4).toString("hex")}`;

afterAll(async () => {
  await dropTestSchemas();
  await sql(`DROP OWNED BY ${role}`).catch(() => undefined);
  await sql(`DROP ROLE IF EXISTS ${role}`);
  await removeTempRepos();
});

describe("plan --state postgres:VARIABLE/schema with a read-only role", () => {
  it("plans against the shared state (only the change), in CI, without being able to write it", async () => {
    const h = await harness({
      files: { "k.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10"), "p.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1") },
    });
    const schema = testSchema();
    const shared = postgresBackend(schema);
    try {
      // the daemon's apply, into the shared state
      expect((await h.apply({ state: shared })).summary.applied).toHaveLength(2);
      await sql(`CREATE ROLE ${role} LOGIN`);
      await sql(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await sql(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const readOnlyUrl = pgUrl.replace("postgres@", `${role}@`);
      expect(readOnlyUrl).not.toBe(pgUrl);
      const file = path.join(h.dir, "config/k.yaml");
      await writeFile(file, (await readFile(file, "utf8")).replace("rate: 10", "rate: 20"));
      const r = await runCli(["plan", "--config", path.join(h.dir, "gatesync.yaml"), "--state", `postgres:GATESYNC_RO_URL/${schema}`, "--detailed-exitcode"], {
        ...h.env,
        GATESYNC_RO_URL: readOnlyUrl,
        CI: "true",
        NO_COLOR: "1",
      });
      // a merge-request job takes no target setting from its checkout: the one note saying so, nothing else
      expect(r.stderr.replace(/^info\[CONFIG_SETTING_IGNORED\] gatesync\.yaml targets: .*\n(?: +hint: .*\n)?/, "")).toBe("");
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(new RegExp(`^gatesync plan \\(state serial \\d+, postgres schema ${schema}\\)\\n`));
      expect(r.stdout).toContain("Plan: 0 to create, 1 to update");
      expect(r.stdout).not.toContain("The state is empty");
      // the role reads; it cannot write
      const client = new pg.Client({ connectionString: readOnlyUrl });
      await client.connect();
      try {
        await expect(client.query(`UPDATE ${schema}.meta SET serial = serial + 1`)).rejects.toThrow(/permission denied/);
      } finally {
        await client.end();
      }
    } finally {
      await shared.close();
      await h.stop();
    }
  }, 60_000);
});
