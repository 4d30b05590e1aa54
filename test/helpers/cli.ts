import { spawn } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { main } from "../../src/cli.js";
import { projectRoot } from "./temp-repo.js";

/** `node` arguments that run the CLI from its TypeScript sources, from any working directory. */
export const tsxLoader = pathToFileURL(path.join(projectRoot, "node_modules/tsx/dist/loader.mjs")).href;
export const cliArgs = (...args: string[]): string[] => ["--import", tsxLoader, path.join(projectRoot, "test/helpers/run-cli.ts"), ...args];

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
