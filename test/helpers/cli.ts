import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { main } from "../../src/cli.js";
import { projectRoot } from "./temp-repo.js";

export const tsxLoader = pathToFileURL(path.join(projectRoot, "node_modules/tsx/dist/loader.mjs")).href;

/** Newest modification time of the files below `dir` (0 when it does not exist). */
function newest(dir: string): number {
  if (!existsSync(dir)) return 0;
  let t = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) t = Math.max(t, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return t;
}

/**
 * The compiled build, when it is at least as new as every source file (as after `npm ci`,
 * whose `prepare` builds it): what production runs, and it starts in half the time. After an
 * edit to src/, the sources themselves, through tsx.
 */
export const compiledIsFresh = ((): boolean => {
  // what bin/gatesync.js runs: the bundle, the last step of the build
  const built = path.join(projectRoot, "dist/bundle/cli.cjs");
  return (
    existsSync(built) && statSync(built).mtimeMs >= Math.max(newest(path.join(projectRoot, "src")), statSync(path.join(projectRoot, "package.json")).mtimeMs)
  );
})();

/** `node` arguments that run the CLI (compiled if fresh, else from sources), from any working directory. */
export const cliArgs = (...args: string[]): string[] =>
  compiledIsFresh ? [path.join(projectRoot, "bin/gatesync.js"), ...args] : ["--import", tsxLoader, path.join(projectRoot, "test/helpers/run-cli.ts"), ...args];

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in this process, capturing its output and exit code. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const before = process.exitCode;
  process.exitCode = undefined;
  await main(["node", "gatesync", ...args], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env, isTty: false });
  const code = Number(process.exitCode ?? 0);
  process.exitCode = before;
  return { code, stdout, stderr };
}

/** Runs the CLI as a real child process (from sources, through tsx). */
export async function spawnCli(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, cliArgs(...args), {
    cwd: opts.cwd ?? projectRoot,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
  return { code, stdout, stderr };
}

/** gatesync's commands, as a shell completes them after `gatesync ` (the hidden ones left out). */
export const gatesyncCommands = [
  "apply",
  "completion",
  "demo",
  "freeze",
  "history",
  "import",
  "init",
  "ownership",
  "plan",
  "promote",
  "rollback",
  "run",
  "sandbox",
  "state",
  "unfreeze",
  "validate",
];
