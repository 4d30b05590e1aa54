/**
 * `gatesync apply` never plans from a state it did not expect (issue 43, point 3): an empty or
 * absent state while the plan creates, or a state of another lineage than the working copy last
 * applied with, is refused before any call — and following each printed hint works. Real
 * processes (the built CLI) against a real sandbox, whose recorded calls are counted.
 */
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { spawnCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { connectionSecrets } from "../../src/secrets/credentials.js";

afterAll(async () => {
  await removeTempRepos();
  await dropTestSchemas();
});
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const files = { "k.yaml": doc("OrgKey", "k", "keyId: k"), "p.yaml": doc("ApiProduct", "p", "Name: P\nProviderID: 1") };
const calls = (x: Harness): number => x.sandbox.inspect.calls().log.length;
const hintOf = (stderr: string): string => /hint: (.*)/.exec(stderr)?.[1] ?? "";

async function apply(x: Harness, config: string, ...flags: string[]) {
  return spawnCli(["apply", "--config", config, "--auto-approve", ...flags], { env: { ...x.env, GATESYNC_LOG_LEVEL: "silent", CI: "" } });
}

describe("gatesync apply and its state", { timeout: 120_000 }, () => {
  it("refuses an absent state when the plan creates (STATE_EMPTY, no call); --allow-empty-state, as the hint says, applies and prints the plan", async () => {
    h = await harness({ files });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const refused = await apply(h, cfg);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("error[STATE_EMPTY] the state this apply would be computed against is empty (sqlite ");
    expect(refused.stderr).toContain("every resource would show as a create");
    expect(hintOf(refused.stderr)).toContain("if nothing was ever applied from this repository, pass --allow-empty-state");
    expect(refused.stdout).not.toContain("Apply:");
    expect(calls(h)).toBe(0);

    const plan = await spawnCli(["plan", "--config", cfg], { env: { ...h.env, GATESYNC_LOG_LEVEL: "silent", CI: "" } });
    const first = await apply(h, cfg, "--allow-empty-state");
    expect(first.code, first.stderr).toBe(0);
    // --auto-approve still shows what it does: the plan's summary and every change, as `plan` prints them
    expect(first.stdout).toContain("Plan: 2 to create");
    const changeLines = plan.stdout.split("\n").filter((l) => /ApiProduct\/p|OrgKey\/k/.test(l));
    expect(changeLines.length).toBeGreaterThanOrEqual(2);
    for (const line of changeLines) expect(first.stdout).toContain(line);
    expect(first.stdout).toContain("Apply: 2 applied");
    expect(first.stdout.indexOf("Plan:")).toBeLessThan(first.stdout.indexOf("Apply:"));
    expect(h.sandbox.inspect.store.orgKeys.has("k")).toBe(true);

    // the state is no longer empty: the next apply needs no flag, and creates nothing again
    const second = await apply(h, cfg);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("Apply: 0 applied");
  });

  it("refuses a state of another lineage (another file) with no call; each hint, followed, works", async () => {
    h = await harness({ files });
    const cfg = path.join(h.dir, "gatesync.yaml");
    expect((await apply(h, cfg, "--allow-empty-state")).code).toBe(0);
    const remembered = JSON.parse(await readFile(path.join(h.dir, ".gatesync/applied-states.json"), "utf8")) as {
      environments: Record<string, { lineage: string }>;
    };
    expect(remembered.environments.default!.lineage).toBe((await h.state.read()).lineage);

    // another working copy of the repository, with its own state, applied once
    const copy = await tempRepo();
    for (const part of ["config", "secrets", "gatesync.yaml"]) await cp(path.join(h.dir, part), path.join(copy, part), { recursive: true });
    expect((await apply(h, path.join(copy, "gatesync.yaml"), "--allow-empty-state")).code).toBe(0);

    // this working copy's config now names the other copy's state
    const original = await readFile(cfg, "utf8");
    await writeFile(cfg, original.replace("path: ./state/state.db", `path: ${path.join(copy, "state/state.db")}`));
    h.sandbox.inspect.resetCalls();
    const refused = await apply(h, cfg);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("error[STATE_FOREIGN] the state is not the one environment default was last applied with from here");
    expect(refused.stderr).toContain(`lineage ${remembered.environments.default!.lineage}`);
    expect(calls(h)).toBe(0);
    const hint = hintOf(refused.stderr);
    expect(hint).toContain(`point gatesync.yaml's \`state\` back at the state of lineage ${remembered.environments.default!.lineage}`);
    expect(hint).toContain("pass --allow-foreign-state");

    // the first hint: the config points back at its state, and the apply runs
    await writeFile(cfg, original);
    const back = await apply(h, cfg);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain("Apply: 0 applied");

    // the second: the other state is taken on once, and remembered
    await writeFile(cfg, original.replace("path: ./state/state.db", `path: ${path.join(copy, "state/state.db")}`));
    const taken = await apply(h, cfg, "--allow-foreign-state");
    expect(taken.code, taken.stderr).toBe(0);
    const after = await apply(h, cfg);
    expect(after.code, after.stderr).toBe(0);
  });

  it("names a PostgreSQL state whose URL holds no password as it is, never '[redacted] schema' (the role name is no secret)", async () => {
    h = await harness({ files });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const schema = testSchema();
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace(/state: \{[^}]*\}/, `state: { backend: postgres, urlEnv: STATE_PG_URL, schema: ${schema} }`));
    const refused = await spawnCli(["apply", "--config", cfg, "--auto-approve"], {
      env: { ...h.env, STATE_PG_URL: pgUrl, GATESYNC_LOG_LEVEL: "silent", CI: "" },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error[STATE_EMPTY] the state this apply would be computed against is empty (postgres schema ${schema})`);
    expect(refused.stderr).not.toContain("[redacted]");
    expect(calls(h)).toBe(0);
  });

  it("scrubs a connection string's password, and the string holding it, but not a role name", () => {
    expect(connectionSecrets("postgresql://postgres@db.internal:5432/gatesync")).toEqual([]);
    expect(connectionSecrets("postgresql://gatesync:p%40ss-w0rd@db:5432/x")).toEqual([
      "postgresql://gatesync:p%40ss-w0rd@db:5432/x",
      "p%40ss-w0rd",
      "p@ss-w0rd",
    ]);
    expect(connectionSecrets("postgresql://db/x?user=u&password=hunter2-long")).toContain("hunter2-long");
    // not a URL: a key=value string may hold a password anywhere
    expect(connectionSecrets("host=db password=abcdefgh")).toEqual(["host=db password=abcdefgh"]);
  });

  it("refuses a memory file it did not write (a commit may add one: an escape sequence in it) before any call; deleting it, as the hint says, works", async () => {
    h = await harness({ files });
    const cfg = path.join(h.dir, "gatesync.yaml");
    await mkdir(path.join(h.dir, ".gatesync"), { recursive: true });
    const memory = path.join(h.dir, ".gatesync/applied-states.json");
    await writeFile(memory, JSON.stringify({ environments: { default: { lineage: "x", state: "\u001b]0;owned\u0007", at: "t" } } }));
    const refused = await apply(h, cfg, "--allow-empty-state");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error[USAGE] ${memory} is not what gatesync writes there`);
    expect(refused.stderr).not.toContain("\u001b");
    expect(hintOf(refused.stderr)).toBe("delete it: the next apply writes it again");
    expect(calls(h)).toBe(0);
    await rm(memory);
    expect((await apply(h, cfg, "--allow-empty-state")).code).toBe(0);
  });
});
