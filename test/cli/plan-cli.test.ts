import { execFileSync } from "node:child_process";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { runPlan } from "../../src/run/run-plan.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { rawStateText } from "../helpers/state-file.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { SchemaRegistry } from "../../src/validate/schema/schema-registry.js";
import { runCli } from "../helpers/cli.js";
import { git } from "../helpers/git-repo.js";
import { tableCells } from "../helpers/markdown.js";
import { doc, recordPlan } from "../helpers/plan.js";
import { exampleSecrets } from "../helpers/apply.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const config = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY, batch: { listenPath: /b/, keyEnv: B_KEY, maxSize: 10 } }
  portal: { url: http://127.0.0.1:1/portal, credentialEnv: P_KEY }
state: { backend: sqlite, path: ./state/state.db }
secrets: { env: [ACME_HMAC] }
`;

async function repo(): Promise<string> {
  return tempRepo({
    "gatesync.yaml": config,
    "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 5\nhmac_string: ${env:ACME_HMAC}"),
    "config/product.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1"),
  });
}

const env = { ACME_HMAC: "the-acme-hmac-secret" };

describe("gatesync plan", () => {
  it("exits 2 with --detailed-exitcode when there are changes, 0 without the flag", async () => {
    const dir = await repo();
    const r = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml"), "--detailed-exitcode"], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(2);
    expect(r.stdout).toContain("+ OrgKey/acme  create  POST /gw/org/keys/org-acme [batch]");
    expect(r.stdout).toContain("Plan: 2 to create");
    expect(r.stdout).not.toContain(env.ACME_HMAC);
    expect((await runCli(["plan", "--config", path.join(dir, "gatesync.yaml")], env)).code).toBe(0);
  });

  it("exits 0 with --detailed-exitcode when the state matches", async () => {
    const dir = await repo();
    const cfg = await loadConfig(path.join(dir, "gatesync.yaml"));
    const backend = new SqliteStateBackend(path.join(dir, "state/state.db"));
    const run = await runPlan({ config: cfg, root: path.join(dir, "config"), validator: new RepositoryValidator(), state: backend, env });
    const lock = await backend.lock("test");
    await backend.initialise(run.hashKey.store);
    const recorded = recordPlan(run.plan, run.desired.desired, run.state);
    for (const rec of recorded.resources.values()) await backend.write(rec);
    await lock.release();
    const r = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml"), "--detailed-exitcode"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No changes");
    expect(await rawStateText(path.join(dir, "state/state.db"))).not.toContain(env.ACME_HMAC);
  });

  it("writes markdown and JSON, and saves the JSON plan with --out", async () => {
    const dir = await repo();
    const md = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml"), "--format", "markdown"], env);
    expect(md.stdout).toMatch(/^### gatesync plan/);
    const out = path.join(dir, "plans/plan.json");
    const json = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml"), "--format", "json", "--out", out], env);
    const parsed = JSON.parse(json.stdout) as { state: { serial: number } };
    expect(new SchemaRegistry().validate("plan.schema.json", parsed)).toEqual([]);
    expect(JSON.parse(await readFile(out, "utf8"))).toEqual(parsed);
    expect(parsed.state.serial).toBe(0);
  });

  it("names each change's file from the repository's root, as its findings are", async () => {
    const dir = await repo();
    git(dir, "init", "-q");
    const json = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml"), "--format", "json"], env);
    const changes = (JSON.parse(json.stdout) as { changes: Array<{ id: string; source?: { file: string; line: number } }> }).changes;
    expect(changes.map((c) => [c.id, c.source])).toEqual([
      ["OrgKey/acme", { file: "config/keys.yaml", line: 1 }],
      ["ApiProduct/shop", { file: "config/product.yaml", line: 1 }],
    ]);
  });

  it("exits 1 naming a secret that cannot be resolved, with its position", async () => {
    const r = await runCli(["plan", "--config", path.join(await repo(), "gatesync.yaml"), "--detailed-exitcode"], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "error[SECRET_UNRESOLVED] keys.yaml:8:16 OrgKey/acme spec.hmac_string: ${env:ACME_HMAC} cannot be resolved: environment variable ACME_HMAC is not set",
    );
  });

  it("exits 1 with a clear message when the state is corrupt or locked", async () => {
    const dir = await repo();
    const statePath = path.join(dir, "state/state.db");
    const backend = new SqliteStateBackend(statePath);
    await backend.lock("x").then((l) => l.release());
    await backend.close();
    await writeFile(statePath, "garbage where the database was, long enough to be read as a header");
    const corrupt = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml")], env);
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toMatch(/error\[STATE_CORRUPT\].*state\.db is corrupt: it is not a SQLite database/);
    expect(corrupt.stderr).toMatch(/hint: it was left untouched/);
  });

  it("exits 1 with every validation error when the repository is invalid", async () => {
    const dir = await repo();
    await writeFile(path.join(dir, "config/bad.yaml"), doc("OrgKey", "bad", "keyId: k\nrate: fast"));
    const r = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml"), "--detailed-exitcode"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error[SCHEMA_VIOLATION] bad.yaml:7:9 OrgKey/bad spec.rate: must be number, not string");
  });
});

describe("gatesync plan and apply on a git source, or on a checkout given with --dir", () => {
  const git = (cwd: string, ...args: string[]): string =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

  it("plans the commit the daemon would apply, and a merge request's checkout against the same state", async () => {
    const dir = await tempRepo({
      "gatesync.yaml": config.replace(
        "source: { directory: ./config }",
        "source: { git: { url: ./origin.git, branch: main, subdirectory: config, cacheDir: ./cache } }",
      ),
    });
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", path.join(dir, "origin.git")]);
    const work = path.join(dir, "work");
    execFileSync("git", ["clone", "-q", path.join(dir, "origin.git"), work], { stdio: "ignore" });
    git(work, "checkout", "-q", "-b", "main");
    await mkdir(path.join(work, "config"));
    await writeFile(path.join(work, "config/product.yaml"), doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1"));
    git(work, "add", "-A");
    git(work, "commit", "-q", "-m", "shop");
    git(work, "push", "-q", "origin", "main");
    const cfg = path.join(dir, "gatesync.yaml");

    const fromGit = await runCli(["plan", "--config", cfg, "--format", "json"], env);
    expect(fromGit.stderr).toBe("");
    const planned = JSON.parse(fromGit.stdout) as { commit?: string; changes: Array<{ id: string; action: string }> };
    expect(planned.changes.map((c) => `${c.action} ${c.id}`)).toEqual(["create ApiProduct/shop"]);
    expect(planned.commit).toBe(git(work, "rev-parse", "HEAD"));

    // a merge request's branch, checked out locally and not pushed: --dir plans it instead
    await writeFile(path.join(work, "config/keys.yaml"), doc("OrgKey", "acme", "keyId: org-acme\nrate: 5\nhmac_string: ${env:ACME_HMAC}"));
    const fromDir = await runCli(["plan", "--config", cfg, "--dir", path.join(work, "config"), "--format", "json"], env);
    expect((JSON.parse(fromDir.stdout) as { changes: Array<{ id: string; action: string }> }).changes.map((c) => `${c.action} ${c.id}`).sort()).toEqual([
      "create ApiProduct/shop",
      "create OrgKey/acme",
    ]);
    expect((await runCli(["plan", "--config", cfg, "--format", "json"], env)).stdout).not.toContain("OrgKey/acme");

    // a git source that cannot be fetched is an error that says so
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace("branch: main", "branch: no-such-branch"));
    const missing = await runCli(["plan", "--config", cfg], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no-such-branch/);
  });
});

describe("the merge-request plan jobs in examples/ci", () => {
  it.each(["github-actions-plan.yaml", "gitlab-ci-plan.yaml"])("%s runs a plan command that works on the examples", async (file) => {
    // the job calls ci/plan-comment.sh CONFIG DIR, whose plan command is taken as written
    const job = await readFile(path.join(projectRoot, "examples/ci", file), "utf8");
    const [, config, resources] = /bash ci\/plan-comment\.sh ([^\s;]+) ([^\s;]+)/.exec(job) ?? [];
    expect([config, resources]).toEqual(["gatesync.yaml", "config"]);
    const script = await readFile(path.join(projectRoot, "examples/ci/plan-comment.sh"), "utf8");
    const command = /^gatesync (plan [^>\n]*?)\s*>/m.exec(script)?.[1];
    expect(command).toBeDefined();
    const dir = await tempRepo();
    await cp(path.join(projectRoot, "examples"), dir, { recursive: true });
    const args = command!
      .replaceAll('"$config"', config!)
      .replaceAll('"$dir"', resources!)
      // the flags a job adds after CONFIG DIR (none here)
      .replaceAll('"$@"', "")
      .split(/\s+/)
      .filter((a) => a !== "")
      .map((a) => (["gatesync.yaml", "config", "plan.json"].includes(a) ? path.join(dir, a) : a));
    const r = await runCli(args, exampleSecrets);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^### gatesync plan/);
    const saved = JSON.parse(await readFile(path.join(dir, "plan.json"), "utf8")) as {
      changes: Array<{ id: string; action: string; operation?: { method: string; path: string; query: string } }>;
    };
    expect(saved).toMatchObject({ changes: expect.any(Array) as unknown });
    // rendered as GitHub renders it: every call cell reads as the call itself, `&` and all
    const rows = tableCells(r.stdout).slice(1);
    const shown = saved.changes.filter((c) => c.action !== "no-op");
    expect(rows.map((cells) => cells[1])).toEqual(shown.map((c) => c.id));
    for (const [i, c] of shown.entries()) {
      if (c.operation !== undefined)
        expect(rows[i]?.[3]).toMatch(
          new RegExp(`^${(c.operation.method + " " + c.operation.path + c.operation.query).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}( \\[.*\\])?$`),
        );
    }
    expect(rows.some((cells) => cells[3]?.includes("&mockResponse=true"))).toBe(true);
    expect(rows.flat().join(" ")).not.toContain("&amp;");
  });
});
