/** One replica of `gatesync run` as a child process: what the replica and fleet tests share. */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { cliArgs } from "./cli.js";

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
