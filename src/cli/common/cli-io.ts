/**
 * What every command shares, kept free of heavy imports: the command modules import it to
 * declare their options (`gatesync --help` loads only these), their actions load the rest.
 */
import { existsSync } from "node:fs";
import type { GatesyncConfig } from "../../config/config.js";
import { stateTokenVariable } from "../../secrets/credentials.js";

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly isTty: boolean;
  /** stdout without the redaction layer: only for the sandbox-only credentials `demo` generated itself. */
  readonly reveal?: (text: string) => void;
  /**
   * Resolves once stdout takes more: writes to a pipe are queued in memory when its reader is
   * slower (`gatesync plan | tee plan.txt`), and a plan of 100,000 resources is hundreds of MB.
   */
  readonly drained?: () => Promise<void>;
}

/** What writeChunks gathers before it writes: one system call per 64 KiB, not per change. */
export const writeBatchChars = 64 * 1024;

/**
 * Writes `chunks` to stdout in order, gathered into writes of about `writeBatchChars` (a plan
 * comes a change at a time, and 10,000 writes of a few hundred bytes cost a quarter of a second
 * of system calls), waiting after each write while stdout's queue is full.
 */
export async function writeChunks(io: CliIo, chunks: Iterable<string>): Promise<void> {
  let gathered: string[] = [];
  let size = 0;
  const write = async (): Promise<void> => {
    if (gathered.length === 0) return;
    io.stdout(gathered.join(""));
    gathered = [];
    size = 0;
    if (io.drained !== undefined) await io.drained();
  };
  for (const chunk of chunks) {
    gathered.push(chunk);
    size += chunk.length;
    if (size >= writeBatchChars) await write();
  }
  await write();
}

/** The config named with `-c` (gatesync.yaml by default). The config reader is loaded on first use. */
export async function configOrDefault(file: string | undefined): Promise<GatesyncConfig> {
  const { loadConfig } = await import("../../config/config.js");
  return loadConfig(file ?? "gatesync.yaml");
}

/**
 * For commands that can work without a config (validate, state migrate, `--state SPEC`): the
 * one given with `-c`, else ./gatesync.yaml when there is one — found as every other command
 * finds it — else none.
 */
export async function configIfPresent(file: string | undefined): Promise<GatesyncConfig | undefined> {
  if (file !== undefined || existsSync("gatesync.yaml")) return configOrDefault(file);
  return undefined;
}

/** `--state SPEC` of plan and the state commands (the backends themselves: state-spec.ts). */
export const stateSpecHelp = "sqlite:PATH, file:PATH (old format, read only), postgres (the config's), or postgres:VARIABLE[/schema]";

/** `--env NAME` (environment-option.ts): plan and validate cover every environment without it. */
export const envOptionHelp = "the environment of gatesync.yaml to work on (`environments:`); without it, every one";
/** `--env NAME` of the commands that write: apply and the state commands work on one environment. */
/** `--daemon` of the commands sent to the daemon: promote, rollback, freeze, unfreeze. */
export const daemonOptionHelp = "the daemon's address (default: GATESYNC_DAEMON_URL)";

export const envOptionHelpOne = "the environment of gatesync.yaml to work on (`environments:`); required when it has several";

/** The variable `plan --state-url` defaults to (plan-state.ts). */
export const stateUrlVariable = "GATESYNC_STATE_URL";

type Env = Readonly<Record<string, string | undefined>>;

/** Whether this runs in CI: `CI` set to anything but "", "0" or "false". */
export function inCi(env: Env): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== "" && ci !== "0" && ci !== "false";
}

/**
 * Whether a command runs for a merge request, whose checkout is data (cli/command-settings.ts):
 * in CI, or with the daemon's address (`--state-url`, GATESYNC_STATE_URL) or its state token
 * (GATESYNC_STATE_TOKEN: what the job `gatesync init` writes holds).
 */
export function forMergeRequest(env: Env, flags: { readonly stateUrl?: string | undefined } = {}): boolean {
  const token = env[stateTokenVariable];
  return inCi(env) || givenStateUrl(env, flags) !== undefined || (token !== undefined && token !== "");
}

/** The daemon's address a command was given: `--state-url`, else GATESYNC_STATE_URL ("" is none). */
export function givenStateUrl(env: Env, flags: { readonly stateUrl?: string | undefined }): string | undefined {
  return [flags.stateUrl, env[stateUrlVariable]].find((v) => v !== undefined && v !== "");
}
