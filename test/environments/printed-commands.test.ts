/**
 * Every command gatesync prints for a person, with environments, is followed as printed: the
 * plan's hints, the apply summary's in-doubt steps and the status page's "waiting for a person"
 * are taken from the output, run through the real CLI from the same working directory, and
 * must act on the environment they were printed for — its state only (printed-commands.ts).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { spawnCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let staging: SandboxHandle;
let production: SandboxHandle;
const env = { GW_KEY: testCredentials.gatewayKey, LLM_KEY: testCredentials.llmKey };

const config = (s: SandboxHandle, p: SandboxHandle, watch = false): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config, watch: ${watch} }
targets:
  gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY }
state: { backend: sqlite, path: ./state/state.db }
retries: { max: 0, baseDelayMs: 10, maxDelayMs: 20, timeoutMs: 5000 }
environments:
  staging:
    targets: { gateway: { url: ${s.urls.gateway}, credentialEnv: GW_KEY }, llm: { url: ${s.urls.llm}, credentialEnv: LLM_KEY } }
  production:
    targets: { gateway: { url: ${p.urls.gateway}, credentialEnv: GW_KEY }, llm: { url: ${p.urls.llm}, credentialEnv: LLM_KEY } }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0" }
`;

const keys = `${doc("OrgKey", "acme", "keyId: org-acme\nrate: 5")}---\n${doc("OrgKey", "globex", "keyId: org-globex\nrate: 5")}`;

/** The words of a command as a POSIX shell splits them (plain words and single quotes: what gatesync prints). */
function words(command: string): string[] {
  return [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] === undefined ? m[2]! : m[1].replaceAll("'\\''", "'")));
}

/** Runs a printed `gatesync …` command as a person would, from `cwd`. */
async function follow(command: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const [program, ...args] = words(command.replace(/\s+#.*$/, "").trim());
  expect(program).toBe("gatesync");
  return spawnCli(args, { cwd, env });
}

/** The state's record ids of one environment, as `gatesync state list` shows them. */
async function recorded(configFile: string, environment: string): Promise<string[]> {
  const r = await spawnCli(["state", "list", "-c", configFile, "--env", environment, "--json"], { env });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { resources: Array<{ id: string }> }).resources.map((x) => x.id).sort();
}

const applyBoth = async (configFile: string): Promise<void> => {
  for (const e of ["staging", "production"]) {
    const r = await spawnCli(["apply", "-c", configFile, "--env", e, "--auto-approve", "--allow-empty-state"], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
  }
};

beforeAll(async () => {
  staging = await testSandbox();
  production = await testSandbox();
}, 30_000);

afterAll(async () => {
  await staging.stop();
  await production.stop();
  await removeTempRepos();
});

describe("printed commands with environments", () => {
  it("a plan's hint, run as printed from another directory, forgets the orphan in its environment only", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config(staging, production), "config/keys.yaml": keys });
    const configFile = path.join(dir, "gatesync.yaml");
    await applyBoth(configFile);
    await writeFile(path.join(dir, "config/keys.yaml"), doc("OrgKey", "acme", "keyId: org-acme\nrate: 5"));
    // planned from the project's directory: the config is not ./gatesync.yaml there
    const plan = await spawnCli(["plan", "-c", configFile, "--env", "staging"], { env, cwd: projectRoot });
    const printed = [...plan.stdout.matchAll(/`(gatesync state resolve OrgKey\/globex --forget[^`]*)`/g)].map((m) => m[1]!);
    expect(printed.length, plan.stdout).toBeGreaterThan(0);
    expect(new Set(printed)).toEqual(new Set([`gatesync state resolve OrgKey/globex --forget -c ${configFile} --env staging`]));
    const r = await follow(printed[0]!, projectRoot);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(await recorded(configFile, "staging")).toEqual(["OrgKey/acme"]);
    expect(await recorded(configFile, "production")).toEqual(["OrgKey/acme", "OrgKey/globex"]);
  }, 120_000);

  it("a blocked change's --accept, planned on a checkout given with --dir and run as printed, accepts that checkout's spec in that environment", async () => {
    const settings = (t: string): string => doc("LlmSettings", "assistant", `attributes:\n  model_name: small\n  temperature: ${t}`);
    const dir = await tempRepo({ "gatesync.yaml": config(staging, production), "config/llm.yaml": settings("0.0") });
    const configFile = path.join(dir, "gatesync.yaml");
    await applyBoth(configFile);
    // a merge request's checkout: the settings changed, which no call can update (blocked)
    const checkout = await tempRepo({ "config/llm.yaml": settings("0.5") });
    const dirFlag = path.join(checkout, "config");
    const plan = await spawnCli(["plan", "--env", "staging", "--dir", dirFlag], { env, cwd: dir });
    const printed = /`(gatesync state resolve LlmSettings\/assistant --accept[^`]*)`/.exec(plan.stdout)?.[1];
    expect(printed, plan.stdout).toBe(`gatesync state resolve LlmSettings/assistant --accept --env staging --dir ${dirFlag}`);
    const r = await follow(printed!, dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // staging now records the checkout's spec: nothing left to do there; production still differs
    const after = await spawnCli(["plan", "--env", "staging", "--dir", dirFlag, "--detailed-exitcode"], { env, cwd: dir });
    expect(after.code, after.stdout).toBe(0);
    const other = await spawnCli(["plan", "--env", "production", "--dir", dirFlag, "--detailed-exitcode"], { env, cwd: dir });
    expect(other.code, other.stdout).toBe(3);
  }, 120_000);

  it("a state command's hint, run as printed, lists that environment's state", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config(staging, production), "config/keys.yaml": keys });
    const configFile = path.join(dir, "gatesync.yaml");
    await applyBoth(configFile);
    const wrong = await spawnCli(["state", "resolve", "OrgKey/nope", "--forget", "-c", configFile, "--env", "production"], { env, cwd: projectRoot });
    expect(wrong.code).toBe(1);
    const printed = /`(gatesync state list[^`]*)`/.exec(wrong.stderr)?.[1];
    expect(printed, wrong.stderr).toBe(`gatesync state list -c ${configFile} --env production`);
    const r = await follow(printed!, projectRoot);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("OrgKey/globex");
  }, 120_000);

  it("the apply summary's in-doubt steps, run as printed where gatesync.yaml is, settle the record of that environment", async () => {
    const dir = await tempRepo({
      "gatesync.yaml": config(staging, production),
      "config/llm.yaml": doc("LlmSettings", "assistant", "attributes:\n  model_name: small\n  temperature: 0.0"),
    });
    const configFile = path.join(dir, "gatesync.yaml");
    const inProduction = await spawnCli(["apply", "-c", configFile, "--env", "production", "--auto-approve", "--allow-empty-state"], { env });
    expect(inProduction.code, inProduction.stdout + inProduction.stderr).toBe(0);
    // staging's create reaches the server, its answer is lost: in doubt
    staging.inspect.setFaults({ lostResponseRate: 1, interfaces: ["llm"] });
    try {
      const apply = await spawnCli(["apply", "--env", "staging", "--auto-approve", "--allow-empty-state"], { env, cwd: dir });
      expect(apply.code).toBe(1);
      // the summary's steps, after the plan the apply printed first
      const summary = apply.stdout.slice(apply.stdout.indexOf("In doubt (sent; the outcome is unknown):"));
      const steps = summary.split("\n").filter((l) => l.trim().startsWith("gatesync "));
      expect(steps.length, apply.stdout).toBeGreaterThan(0);
      for (const step of steps) expect(step).toMatch(/ --env staging(?: |$)/);
      const forget = steps.find((s) => s.includes("--forget"));
      expect(forget, apply.stdout).toBeDefined();
      const r = await follow(forget!.replace(/\s+\(.*\)$/, ""), dir);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(await recorded(configFile, "staging")).toEqual([]);
      expect(await recorded(configFile, "production")).toEqual(["LlmSettings/assistant"]);
    } finally {
      staging.inspect.setFaults({ lostResponseRate: 0, interfaces: [] });
    }
  }, 120_000);

  it("the status page's “waiting for a person” command of an environment, run as printed, acts on that environment", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config(staging, production, true), "config/keys.yaml": keys });
    const configFile = path.join(dir, "gatesync.yaml");
    const daemon = await startDaemon({ config: await loadConfig(configFile), env, logger: silentLogger(), listen: "127.0.0.1:0", watchConfig: false });
    try {
      expect((await daemon.firstRun).result).toBe("applied");
      await writeFile(path.join(dir, "config/keys.yaml"), doc("OrgKey", "acme", "keyId: org-acme\nrate: 5"));
      const page = await eventually(
        () => call(`${daemon.url}/environments/production/resources/OrgKey/globex`),
        (p) => p.text.includes("data-resolve"),
      );
      const command = /<pre class="commands" data-resolve>([^<]*)<\/pre>/.exec(page.text)![1]!.replaceAll("&#39;", "'").split("\n")[0]!;
      expect(command).toContain("--env production");
      const r = await follow(command, process.cwd());
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(await recorded(configFile, "production")).toEqual(["OrgKey/acme"]);
      expect(await recorded(configFile, "staging")).toEqual(["OrgKey/acme", "OrgKey/globex"]);
    } finally {
      await daemon.stop();
    }
  }, 120_000);
});
