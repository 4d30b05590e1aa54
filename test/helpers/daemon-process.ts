/**
 * `gatesync run` as a child process: what the daemon's end-to-end tests share (polling is
 * ./eventually.ts's).
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { sandboxEnv } from "./apply.js";
import { cliArgs } from "./cli.js";
import { eventually } from "./eventually.js";

/** The `targets:` of a gatesync.yaml pointing at a sandbox, credentials from the variables `daemonEnv` sets. */
export function sandboxTargets(sandbox: SandboxHandle): string {
  return `targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY, batch: { listenPath: /gw-batch/, apiId: gw-loopback, keyEnv: BATCH_KEY } }
  portal: { url: ${sandbox.urls.portal}, credentialEnv: PORTAL_KEY, appTypeProviders: [3] }
  dashboard: { url: ${sandbox.urls.dashboard}, tokenEnv: DASH_TOKEN }
  llm: { url: ${sandbox.urls.llm}, credentialEnv: LLM_KEY }
`;
}

/** The variables those targets name, and the examples' secrets. */
export const daemonEnv = sandboxEnv;

export interface DaemonProcess {
  readonly child: ChildProcess;
  /** The HTTP server's address, read from its log. */
  readonly url: string;
  /** Everything it wrote so far. */
  output(): string;
}

/** Spawns `gatesync run --config CONFIG` in `cwd` and waits until its HTTP server listens. */
export async function spawnDaemon(
  config: string,
  cwd: string,
  env: Readonly<Record<string, string>> = {},
  extraArgs: readonly string[] = [],
): Promise<DaemonProcess> {
  const child = spawn(process.execPath, cliArgs("run", "--config", config, ...extraArgs), {
    cwd,
    env: { ...process.env, GATESYNC_LOG_LEVEL: "info", ...daemonEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (b: Buffer) => (output += b.toString()));
  child.stderr.on("data", (b: Buffer) => (output += b.toString()));
  const match = await eventually(
    () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output),
    (m) => m !== null || child.exitCode !== null,
    60_000,
    () => `\ndaemon output:\n${output.slice(-3000)}`,
  );
  if (match === null) throw new Error(`the daemon exited (${child.exitCode}) before listening:\n${output.slice(-3000)}`);
  return { child, url: match[1]!, output: () => output };
}

/** Stops a daemon (SIGTERM) and waits until it exited, so nothing writes into its directories after (their removal). */
export async function stopDaemon(daemon: DaemonProcess | undefined): Promise<void> {
  if (daemon === undefined) return;
  const child = daemon.child;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
