/**
 * What a new user trips over in the one-shot commands, each driven as the user meets it: a
 * real daemon holding the lock, real processes, a real `git add -A`.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, postgresBackend, testSchema } from "../helpers/postgres.js";
import { committedRepo, gitSourceConfig } from "../helpers/git-repo.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(async () => {
  await removeTempRepos();
  await dropTestSchemas();
});
let h: Harness | undefined;
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  if (daemon !== undefined && daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
  daemon = undefined;
  await h?.stop();
  h = undefined;
});

const quiet = { GATESYNC_LOG_LEVEL: "silent" };

describe("a state locked by the daemon", () => {
  it("names the daemon, not `gatesync apply`, and its pid once", async () => {
    // every portal answer takes 20 s: the daemon's first run holds the lock meanwhile
    h = await harness({
      files: { "p.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1") },
      sandbox: { faults: { latencyMs: 20_000, interfaces: ["portal"] } },
      configExtra: 'server: { listen: "127.0.0.1:0" }\nschedule: { interval: 1h }\n',
    });
    const cfg = path.join(h.dir, "gatesync.yaml");
    daemon = await spawnDaemon(cfg, h.dir, h.env);
    await eventually(
      () => daemon!.output(),
      (out) => out.includes('"msg":"run started"'),
      30_000,
    );
    // the call is on its way (or about to be): the lock is held until it answers
    const r = await eventually(
      () => spawnCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], { cwd: h!.dir, env: { ...h!.env, ...quiet } }),
      (x) => x.stderr.includes("STATE_LOCKED"),
      15_000,
    );
    expect(r.code).toBe(1);
    const pid = String(daemon.child.pid);
    expect(r.stderr).toContain(`is locked by gatesync run (daemon) (pid ${pid} on `);
    expect(r.stderr.match(/pid \d+/g)).toHaveLength(1);
    expect(r.stderr).not.toContain("gatesync apply");
  });
});

describe("./gatesync.yaml is found by every command", () => {
  it("`state migrate --to postgres` reads ./gatesync.yaml without -c, and the copy is the daemon's state", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 5") } });
    expect((await runCli(["apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"], { ...h.env, ...quiet })).code).toBe(
      0,
    );
    // the team moves to PostgreSQL: the config now names it, the old SQLite file stays
    const schema = testSchema();
    const config = path.join(h.dir, "gatesync.yaml");
    await writeFile(
      config,
      (await readFile(config, "utf8")).replace(
        "state: { backend: sqlite, path: ./state/state.db }",
        `state: { backend: postgres, urlEnv: PG_URL, schema: ${schema} }`,
      ),
    );
    const r = await spawnCli(["state", "migrate", "--from", "sqlite:state/state.db", "--to", "postgres"], { cwd: h.dir, env: { PG_URL: pgUrl } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("migrated 1 records");
    const migrated = postgresBackend(schema);
    try {
      expect([...(await migrated.read()).resources.keys()]).toEqual(["OrgKey/k"]);
    } finally {
      await migrated.close();
    }
  });
});

describe("invalid files", () => {
  const bad = { "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: fast") };

  it("apply says nothing was applied, and names the file from the repository's root", async () => {
    h = await harness({ files: bad });
    const r = await spawnCli(["apply", "--config", "gatesync.yaml", "--auto-approve", "--allow-empty-state"], { cwd: h.dir, env: { ...h.env, ...quiet } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error\[SCHEMA_VIOLATION\] config\/k\.yaml:\d+:\d+ OrgKey\/k spec\.rate/m);
    expect(r.stderr).toContain("invalid: 1 error(s), 0 warning(s): nothing applied");
    expect(h.sandbox.inspect.calls().log).toEqual([]);
  });

  it("plan says no plan was made", async () => {
    h = await harness({ files: bad });
    const r = await spawnCli(["plan"], { cwd: h.dir, env: { ...h.env, ...quiet } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("invalid: 1 error(s), 0 warning(s): no plan made");
  });
});

describe("a wrong `branch:`", () => {
  it("is a located error naming the branch and the remote's branches, not git's 'ambiguous argument'", async () => {
    const origin = await committedRepo({ "config/k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 5") });
    const work = await tempRepo();
    const text = gitSourceConfig(origin.dir, path.join(work, "cache")).replace("branch: main", "branch: mian");
    await writeFile(path.join(work, "gatesync.yaml"), text);
    const r = await spawnCli(["plan"], { cwd: work, env: quiet });
    expect(r.code).toBe(1);
    const at = positionOf(text, "mian");
    expect(r.stderr).toContain(
      `error[SOURCE_INVALID] gatesync.yaml:${at.line}:${at.column} source.git.branch: the branch \`mian\` does not exist in ${origin.dir}`,
    );
    expect(r.stderr).toContain("hint: did you mean `main`? its branches: main; set source.git.branch in gatesync.yaml");
    expect(r.stderr).not.toContain("ambiguous argument");
  });
});
