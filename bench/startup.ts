/**
 * What users wait for on small repositories: whole processes of the compiled CLI, cold, each
 * to a bare `node -e 0` measured in the same run (interleaved, so that the machine's load
 * touches them alike) — `--help`, `--version`, and `validate`, `plan` and `apply` of the
 * examples (examples/config, 17 resources in 12 files) against a state their first apply
 * wrote into a sandbox process; then `validate` of generated repositories of 100 and 1,000
 * resources. CPU (user + system, what the process costs) and wall time from /usr/bin/time.
 *
 *   BENCH_PARTS=startup npm run bench
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";
import { loadFixtures } from "../src/sandbox/fixtures.js";
import { cli, measureProcess, processFigures } from "./cold.js";
import type { ProcessFigures, ProcessSample } from "./cold.js";
import { log } from "./common.js";
import { generateRepository } from "./generate.js";
import { startSandboxChild } from "./sandbox-child.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const examples = path.resolve(here, "../examples");
const oas = path.resolve(here, "../test/fixtures/shared/corpus/oas");

/** One measured command: a label, its arguments, and the exit codes that count as done. */
interface Command {
  readonly label: string;
  readonly args: readonly string[];
  readonly codes?: readonly number[];
}

export interface StartupFigures {
  /** `node -e 0`, the yardstick. */
  readonly node: ProcessFigures;
  readonly commands: ReadonlyArray<{ readonly label: string } & ProcessFigures>;
}

/** The sandbox's credentials, and the variables the examples' config and resources read, as a user's shell would hold them. */
export const credentials = { gatewayKey: "bench-gw", portalKey: "bench-portal", dashboardToken: "bench-dash", llmKey: "bench-llm" };
export const exampleEnv = {
  GW_ADMIN_KEY: credentials.gatewayKey,
  PORTAL_API_KEY: credentials.portalKey,
  DASHBOARD_TOKEN: credentials.dashboardToken,
  LLM_API_KEY: credentials.llmKey,
  GW_BATCH_KEY: "sandbox-loopback-key",
  PETSTORE_MOBILE_CLIENT_SECRET: "bench-client-secret",
  CRM_HOOK_TOKEN: "bench-crm-token",
  CHAT_WEBHOOK_TOKEN: "bench-chat-token",
  NO_COLOR: "1",
};

/** examples/gatesync.yaml with its targets at the sandbox, its state in `dir`, its source and secrets copied there. */
async function examplesConfig(dir: string, urls: Readonly<Record<"gateway" | "portal" | "dashboard" | "llm", string>>): Promise<string> {
  await cp(path.join(examples, "config"), path.join(dir, "config"), { recursive: true });
  await cp(path.join(examples, "secrets"), path.join(dir, "secrets"), { recursive: true });
  const config = parse(await readFile(path.join(examples, "gatesync.yaml"), "utf8")) as { targets: Record<string, { url: string }>; state: unknown };
  for (const [name, url] of Object.entries(urls)) config.targets[name]!.url = url;
  config.state = { backend: "sqlite", path: "./state.db" };
  const file = path.join(dir, "gatesync.yaml");
  await writeFile(file, stringify(config));
  return file;
}

/** Each command `n` times, interleaved with `node -e 0`. */
async function measureAll(commands: readonly Command[], n: number, env: Record<string, string>): Promise<StartupFigures> {
  const node: ProcessSample[] = [];
  const samples = commands.map(() => [] as ProcessSample[]);
  for (let i = 0; i < n; i++) {
    node.push(await measureProcess(["-e", "0"], env));
    for (const [k, c] of commands.entries()) samples[k]!.push(await measureProcess([...c.args], env, c.codes));
  }
  return { node: processFigures(node), commands: commands.map((c, k) => ({ label: c.label, ...processFigures(samples[k]!) })) };
}

export async function startupFigures(n: number): Promise<StartupFigures> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-startup-"));
  try {
    const sandbox = await startSandboxChild({ gatesync: [cli], fixtures: await loadFixtures(path.join(examples, "sandbox-fixtures.yaml")), dir, credentials });
    try {
      const { gateway, portal, dashboard, llm } = sandbox.urls;
      const config = await examplesConfig(dir, { gateway, portal, dashboard, llm });
      log("[examples] the first apply, into the sandbox (writes the state the plans and applies below compare with)");
      await measureProcess([cli, "apply", "-c", config, "--auto-approve", "--allow-empty-state"], exampleEnv);
      log("[100, 1000] generating");
      const small = await generateRepository(path.join(dir, "100"), 100, oas);
      const medium = await generateRepository(path.join(dir, "1000"), 1000, oas);
      log(`[examples, 100, 1000] ${n} runs of each command, interleaved with node -e 0`);
      return await measureAll(
        [
          { label: "`gatesync --help`", args: [cli, "--help"] },
          { label: "`gatesync --version`", args: [cli, "--version"] },
          { label: "`gatesync validate` of the examples (17 resources)", args: [cli, "validate", path.join(dir, "config")] },
          { label: "`gatesync plan` of the examples against their state", args: [cli, "plan", "-c", config] },
          { label: "`gatesync apply` of the examples, state matching", args: [cli, "apply", "-c", config, "--auto-approve"] },
          // the generated documents include corpus variants the OpenAPI checks refuse: exit 1, the same work
          { label: "`gatesync validate`, 100 resources", args: [cli, "validate", small.root], codes: [0, 1] },
          { label: "`gatesync validate`, 1,000 resources", args: [cli, "validate", medium.root], codes: [0, 1] },
        ],
        n,
        { ...exampleEnv, BENCH_SECRET: "bench-secret-value" },
      );
    } finally {
      await sandbox.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
