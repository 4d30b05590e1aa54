/** One replica of `gatesync run` as a child process: what the replica and fleet tests share. */
import { spawn } from "node:child_process";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { cliArgs } from "./cli.js";
import { eventually } from "./eventually.js";

export interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything it wrote so far. */
  log: string;
  /** Its HTTP server's address, once its log says it listens. */
  url?: string | undefined;
}

/** Spawns `gatesync run --config CONFIG` in `cwd`, with `env` over this process's environment. */
export function spawnReplica(name: string, config: string, cwd: string, env: Readonly<Record<string, string>>): Replica {
  const child = spawn(process.execPath, cliArgs("run", "--config", config), { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const r: Replica = { name, child, log: "" };
  const take = (b: Buffer): void => {
    r.log += b.toString();
    r.url ??= /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(r.log)?.[1];
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  return r;
}

/**
 * Starts a replica on `config` (DIR/gatesync.yaml unless given) in `dir`, with `env`, and adds it
 * to `replicas`, the list a test stops at its end: the one replica starter of the tests.
 */
export function startReplica(
  replicas: Replica[],
  name: string,
  dir: string,
  env: Readonly<Record<string, string>>,
  config = path.join(dir, "gatesync.yaml"),
): Replica {
  const r = spawnReplica(name, config, dir, env);
  replicas.push(r);
  return r;
}

/**
 * Whether the replica's lease connection is up and listening for triggers (its log says so): a
 * replica that does not lead says `standby` on /status before then, and cannot carry a trigger yet.
 */
export const listening = (r: Replica): boolean => r.log.includes("fleet: connected; listening for triggers");

/**
 * Polls `read` every `pauseMs` until `ok`; after `ms` fails with the last value, `what` was waited
 * for and the end of each replica's log (what a failed multi-process test needs to be read).
 */
export function untilWithLogs(replicas: readonly Replica[], pauseMs = 100) {
  return async <T>(read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 30_000, what = ""): Promise<T> =>
    eventually(read, ok, ms, () => ` (waiting ${what})\n${replicas.map((r) => `--- ${r.name}\n${r.log.slice(-2500)}`).join("\n")}`, pauseMs);
}
