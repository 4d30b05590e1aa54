/**
 * The examples each command's `--help` ends with are true: every one is shown by its command's
 * help and runs, as printed, in a repository `gatesync init` made, against the sandbox (real
 * processes, in the order a new user meets them). The only words added are to the daemons'
 * and the sandbox's addresses (`--listen 127.0.0.1:0`, `--port 0`): the printed ports may be
 * taken on a shared machine.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Command } from "commander";
import { helpExamples } from "../../src/cli/common/help-examples.js";
import { buildProgram } from "../../src/cli.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import { checkFixtures } from "../../src/sandbox/fixtures.js";
import { parse } from "yaml";
import { cliArgs, runCli, spawnCli } from "../helpers/cli.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { doc } from "../helpers/plan.js";
import { candidateReady, promoteToken, promotedTwice, promotionDaemon } from "../helpers/promotion-daemon.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";

let sandbox: SandboxHandle | undefined;
/** The daemon the promotion examples talk to (staging → production), and the variables that find it. */
let promotion: PromotionDaemon | undefined;
const promotionEnv: Record<string, string> = {};
afterAll(async () => {
  await sandbox?.stop();
  await promotion?.stop();
  await removeTempRepos();
});

const credentials = { GW_ADMIN_KEY: "ex-gateway-key", PORTAL_API_KEY: "ex-portal-key", DASHBOARD_TOKEN: "ex-dashboard-token", LLM_API_KEY: "ex-llm-key" };
/** What every example runs with: the scaffold's credentials, no CI (a plan against the new state is allowed), no colour. */
const env = { ...credentials, CI: undefined, GITHUB_ACTIONS: undefined, GITLAB_CI: undefined, NO_COLOR: "1", GATESYNC_LOG_LEVEL: "info" };

type Where = "repo" | "parent";
interface Step {
  readonly line: string;
  readonly where: Where;
  readonly exit: number;
  /** A command that runs until stopped: it is stopped (SIGTERM, or SIGINT for demo) once its output matches, and must exit 0. */
  readonly until?: RegExp;
  readonly address?: readonly string[];
  readonly shows?: RegExp;
  /** What the user does to the repository before this example (as the docs say), in the repository's directory. */
  readonly before?: (repo: string) => Promise<void>;
}

/** The environment the single-environment state moves to: gatesync.yaml gains `environments:` first (docs/user/environments.md). */
async function addProductionEnvironment(repo: string): Promise<void> {
  const config = path.join(repo, "gatesync.yaml");
  await writeFile(config, `${await readFile(config, "utf8")}\nenvironments:\n  production: {}\n`);
}

/** A daemon promoting staging to production, its first revision verified in staging; the examples find it through the variables. */
async function startPromotionDaemon(): Promise<void> {
  promotion = await promotionDaemon({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10") });
  Object.assign(promotionEnv, { GATESYNC_DAEMON_URL: promotion.daemon.url!, GATESYNC_PROMOTE_TOKEN: promoteToken });
  await candidateReady(promotion);
}

/** The dashboard's OAS export of the scaffold's API (docs/user/import.md): its document with the extension and the API's id. */
async function writePetstoreExport(repo: string): Promise<void> {
  const ext = { info: { id: "petstore-v1", name: "Petstore", state: { active: true } }, server: { listenPath: { value: "/petstore/", strip: true } } };
  await writeFile(
    path.join(repo, "petstore.oas.json"),
    JSON.stringify({ openapi: "3.0.3", info: { title: "Petstore", version: "1.0.0" }, paths: {}, "x-tyk-api-gateway": ext }),
  );
}

const secondRevision = {
  "config/keys.yaml": `${doc("OrgKey", "acme", "keyId: org-acme\nrate: 20")}---\n${doc("OrgKey", "globex", "keyId: org-globex\nrate: 5")}`,
};

/** Every example, in the order they run; `exit` is the documented code for that moment. */
const steps: readonly Step[] = [
  { line: "gatesync init", where: "repo", exit: 0, shows: /scaffolded/ },
  { line: "gatesync init --force", where: "repo", exit: 0 },
  { line: "gatesync init my-gateway-config", where: "parent", exit: 0 },
  { line: "gatesync validate", where: "repo", exit: 0, shows: /valid: 8 resources in 8 files/ },
  { line: "gatesync validate config --format json", where: "repo", exit: 0 },
  { line: "gatesync validate --format github", where: "repo", exit: 0 },
  { line: "gatesync plan", where: "repo", exit: 0, shows: /5 to create, 3 to update/ },
  { line: "gatesync plan --detailed-exitcode", where: "repo", exit: 2 },
  { line: "gatesync plan --target OrgKey/acme --fail-on-breaking", where: "repo", exit: 0 },
  { line: "gatesync apply --auto-approve --allow-empty-state --target OrgKey/acme", where: "repo", exit: 0, shows: /Apply: 1 applied/ },
  { line: "gatesync plan --format markdown --out plan.json", where: "repo", exit: 0 },
  { line: "gatesync apply --plan plan.json --auto-approve", where: "repo", exit: 0, shows: /Apply: 7 applied/ },
  { line: "gatesync apply --auto-approve", where: "repo", exit: 0 },
  { line: "gatesync state list", where: "repo", exit: 0, shows: /OrgKey\/acme/ },
  { line: "gatesync state list --json", where: "repo", exit: 0 },
  { line: "gatesync state pull --out state.json", where: "repo", exit: 0 },
  { line: "gatesync state push state.json", where: "repo", exit: 0 },
  { line: "gatesync state resolve OrgKey/acme --accept", where: "repo", exit: 0 },
  { line: "gatesync state migrate --from sqlite:.gatesync/state.db --to sqlite:copy.db", where: "repo", exit: 0 },
  { line: "gatesync ownership list --format json", where: "repo", exit: 0, shows: /"object": "org-key:acme"/ },
  { line: "gatesync ownership list", where: "repo", exit: 0, shows: /org-key:acme {2}gateway \S+ {2}owner default \(environment default\)/ },
  {
    line: 'gatesync ownership transfer org-key:acme --interface gateway --to payments --to-environment payments-prod --reason "payments runs acme now"',
    where: "repo",
    exit: 0,
    shows: /moved from team default \(environment default\) to team payments \(environment payments-prod\); nothing was sent/,
  },
  {
    line: 'gatesync ownership release org-key:acme --interface gateway --reason "acme goes back to this repository"',
    where: "repo",
    exit: 0,
    shows: /released by team payments/,
  },
  { line: "gatesync run --once", where: "repo", exit: 0 },
  { line: "gatesync run", where: "repo", exit: 0, until: /"msg":"run finished"/, address: ["--listen", "127.0.0.1:0"] },
  { line: "gatesync history", where: "repo", exit: 0, shows: /#\d+ \S+ (applied|noop) / },
  { line: "gatesync history --format json --limit 5", where: "repo", exit: 0, shows: /"outcome": "(applied|noop)"/ },
  { line: "gatesync state resolve ApiProduct/storefront --forget", where: "repo", exit: 0 },
  // the product is still on the portal: recorded again under its id, as one made by hand would be
  { line: "gatesync state adopt ApiProduct/storefront --id 1042", where: "repo", exit: 0, shows: /adopted ApiProduct\/storefront as server id 1042/ },
  {
    line: "gatesync state move-to-env production",
    where: "repo",
    exit: 0,
    before: addProductionEnvironment,
    shows: /migrated \d+ records .* to .*state\.production\.db/,
  },
  { line: "gatesync promote production --dry-run", where: "repo", exit: 0, before: startPromotionDaemon, shows: /would apply 1 change; nothing promoted/ },
  { line: "gatesync promote production", where: "repo", exit: 0, shows: /promoted [0-9a-f]{12} from staging to production/ },
  {
    line: "gatesync rollback production --steps 1 --dry-run",
    where: "repo",
    exit: 0,
    before: async () => promotedTwice(promotion!, secondRevision),
    shows: /The rollback cannot undo:\n {2}OrgKey\/globex was created after [0-9a-f]{12}/,
  },
  { line: "gatesync rollback production --steps 1 --auto-approve", where: "repo", exit: 0, shows: /rolled production back to [0-9a-f]{12}/ },
  { line: 'gatesync freeze production --reason "incident 4521" --until 2h', where: "repo", exit: 0, shows: /production frozen until .*: incident 4521/ },
  { line: 'gatesync freeze production --reason "release freeze"', where: "repo", exit: 0, shows: /production frozen: release freeze/ },
  { line: 'gatesync unfreeze production --reason "incident closed"', where: "repo", exit: 0, shows: /production unfrozen/ },
  { line: "gatesync sandbox --fixtures sandbox-fixtures.yaml", where: "repo", exit: 0, until: /sandbox listening on/, address: ["--port", "0"] },
  {
    line: "gatesync sandbox --fixtures sandbox-fixtures.yaml --error-rate 0.05 --latency 200 --seed 7",
    where: "repo",
    exit: 0,
    until: /sandbox listening on/,
    address: ["--port", "0"],
  },
  { line: "gatesync sandbox --rate-limit 20:5", where: "repo", exit: 0, until: /sandbox listening on/, address: ["--port", "0"] },
  { line: "gatesync completion bash", where: "repo", exit: 0, shows: /complete -o default -F _gatesync_complete gatesync/ },
  { line: "gatesync completion fish", where: "repo", exit: 0, shows: /complete -c gatesync/ },
  { line: "gatesync demo --once", where: "repo", exit: 0, shows: /Apply: 17 applied/ },
  { line: "gatesync demo --serve", where: "repo", exit: 0, until: /Ctrl-C to stop/, address: ["--listen", "127.0.0.1:0"] },
  {
    line: "gatesync import --dashboard-export petstore.oas.json --merge .",
    where: "repo",
    exit: 0,
    before: writePetstoreExport,
    shows: /api:petstore-v1 is already declared as ApiDefinition\/petstore in config\/api-definition.yaml: left as it is/,
  },
];

/** A command that runs until stopped: started, awaited until `until` shows, stopped; its exit code and output. */
async function runUntil(args: string[], cwd: string, until: RegExp, signal: NodeJS.Signals): Promise<{ code: number; out: string }> {
  const child = spawn(process.execPath, cliArgs(...args), { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const closed = new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
  const seen = new Promise<void>((resolve) => {
    const check = (b: Buffer): void => {
      out += b.toString();
      if (until.test(out)) resolve();
    };
    child.stdout.on("data", check);
    child.stderr.on("data", check);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  await Promise.race([seen, closed]);
  child.kill(signal);
  const code = await closed;
  clearTimeout(timer);
  return { code, out };
}

/** The scaffold's sandbox, in this process on a free port, and gatesync.yaml pointed at it. */
async function pointAtSandbox(repo: string): Promise<void> {
  if (sandbox === undefined) {
    const fixtures = checkFixtures(parse(await readFile(path.join(repo, "sandbox-fixtures.yaml"), "utf8")));
    const keys = {
      gatewayKey: credentials.GW_ADMIN_KEY,
      portalKey: credentials.PORTAL_API_KEY,
      dashboardToken: credentials.DASHBOARD_TOKEN,
      llmKey: credentials.LLM_API_KEY,
    };
    sandbox = await startSandbox({ credentials: keys, fixtures });
  }
  const config = path.join(repo, "gatesync.yaml");
  await writeFile(config, (await readFile(config, "utf8")).replaceAll("http://127.0.0.1:8080", sandbox.urls.base));
}

describe("the examples in --help", () => {
  it("every command has examples", () => {
    const paths = (c: Command, prefix: string[]): string[] =>
      c.commands.flatMap((sub) => [[...prefix, sub.name()].join(" "), ...paths(sub, [...prefix, sub.name()])]);
    const commands = paths(buildProgram(), []);
    expect(commands).toContain("state adopt");
    expect(commands.filter((c) => (helpExamples[c] ?? []).length === 0)).toEqual([]);
  });

  it("each command's help ends with its examples, and every example declared is run below", async () => {
    for (const [command, examples] of Object.entries(helpExamples)) {
      const help = await runCli([...command.split(" "), "--help"]);
      expect(help.code, command).toBe(0);
      const shown = help.stdout.slice(help.stdout.indexOf("\nExamples:\n"));
      expect(shown, command).toBe(`\nExamples:\n${examples.map((e) => `  $ ${e.line}\n      ${e.says}\n`).join("")}`);
      for (const e of examples)
        expect(
          steps.map((s) => s.line),
          e.line,
        ).toContain(e.line);
    }
    for (const s of steps)
      expect(
        Object.values(helpExamples)
          .flat()
          .map((e) => e.line),
        s.line,
      ).toContain(s.line);
  });

  it("every example runs as printed against the sandbox, with its documented exit code", async () => {
    const parent = await mkdtemp(path.join(tmpdir(), "gatesync-examples-"));
    const dirs: Record<Where, string> = { repo: await tempRepo(), parent };
    for (const step of steps) {
      // as a shell splits it: a double-quoted word is one (`--reason "incident 4521"`)
      const words = (step.line.match(/"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^"(.*)"$/, "$1"));
      expect(words[0]).toBe("gatesync");
      const args = [...words.slice(1), ...(step.address ?? [])];
      const cwd = dirs[step.where];
      await step.before?.(cwd);
      if (step.until !== undefined) {
        const r = await runUntil(args, cwd, step.until, words[1] === "demo" ? "SIGINT" : "SIGTERM");
        expect(r.out, step.line).toMatch(step.until);
        expect(r.code, `${step.line}\n${r.out}`).toBe(step.exit);
        continue;
      }
      const r = await spawnCli(args, { cwd, env: { ...env, ...promotionEnv } });
      expect(r.code, `${step.line}\n${r.stdout}${r.stderr}`).toBe(step.exit);
      if (step.shows !== undefined) expect(r.stdout, step.line).toMatch(step.shows);
      if (words[1] === "init" && step.where === "repo") await pointAtSandbox(cwd);
    }
  }, 600_000);
});
