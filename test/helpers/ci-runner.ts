/**
 * What the action's and the component's tests share: a team's repository with a daemon applying
 * it (a sandbox behind it, its state served read-only), a merge request's fresh clone, and
 * `gatesync` on PATH as a package install lays it out (bin/ beside examples/ci/).
 */
import { execFileSync, spawn } from "node:child_process";
import { chmod, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { cliArgs } from "./cli.js";
import type { DaemonProcess } from "./daemon-process.js";
import { spawnDaemon, stopDaemon } from "./daemon-process.js";
import { eventually } from "./eventually.js";
import { git } from "./git-repo.js";
import { doc } from "./resources.js";
import { call, testSandbox } from "./sandbox.js";
import { afterAll, beforeAll } from "vitest";
import { projectRoot, removeTempRepos, tempRepo } from "./temp-repo.js";

export const stateToken = "ci-runner-state-token-5c2a";

export interface TeamRepository {
  readonly sandbox: SandboxHandle;
  readonly daemon: DaemonProcess;
  /** The bare repository the clones come from. */
  readonly origin: string;
  /** A directory to put first on PATH: `gatesync` there. */
  readonly bin: string;
  stop(): Promise<void>;
}

/** The repository, pushed to a bare origin; the daemon on its own checkout, synced once. */
/** One team repository and daemon for a whole test file: made before its tests, stopped after them. */
export function teamRepositoryForFile(): () => TeamRepository {
  let team: TeamRepository | undefined;
  beforeAll(async () => {
    team = await teamRepository();
  }, 120_000);
  afterAll(async () => {
    await team?.stop();
    await removeTempRepos();
  });
  return () => {
    if (team === undefined) throw new Error("the team repository is made in beforeAll");
    return team;
  };
}

export async function teamRepository(): Promise<TeamRepository> {
  const sandbox = await testSandbox();
  const work = await tempRepo({
    "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme-ci\nrate: 1000\nper: 60"),
    "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
state: { backend: sqlite, path: .gatesync/state.db }
schedule: { interval: 1h, jitter: 0 }
server: { listen: "127.0.0.1:0", stateTokenEnv: GATESYNC_STATE_TOKEN }
`,
    ".gitignore": ".gatesync/\n",
  });
  git(work, "init", "-q", "-b", "main");
  git(work, "add", "-A");
  git(work, "commit", "-qm", "acme");
  const origin = path.join(await tempRepo(), "origin.git");
  execFileSync("git", ["clone", "-q", "--bare", work, origin]);
  const deployed = path.join(await tempRepo(), "deployed");
  execFileSync("git", ["clone", "-q", origin, deployed]);
  const daemon = await spawnDaemon("gatesync.yaml", deployed, { GATESYNC_STATE_TOKEN: stateToken });
  await eventually(
    () => call(`${daemon.url}/status`).then((r) => r.body as { synced: boolean }),
    (s) => s.synced,
    60_000,
    () => daemon.output().slice(-3000),
  );
  return {
    sandbox,
    daemon,
    origin,
    bin: await gatesyncOnPath(),
    stop: async () => {
      await stopDaemon(daemon);
      await sandbox.stop();
    },
  };
}

/** `gatesync` in PKG/bin with PKG/examples the project's, as `npm install --global` lays the package out. */
export async function gatesyncOnPath(): Promise<string> {
  const pkg = path.join(await tempRepo(), "pkg");
  await mkdir(path.join(pkg, "bin"), { recursive: true });
  await symlink(path.join(projectRoot, "examples"), path.join(pkg, "examples"));
  const shim = path.join(pkg, "bin", "gatesync");
  const args = cliArgs()
    .map((a) => `"${a}"`)
    .join(" ");
  await writeFile(shim, `#!/bin/sh\nexec "${process.execPath}" ${args} "$@"\n`);
  await chmod(shim, 0o755);
  return path.join(pkg, "bin");
}

/** A fresh clone with the merge request's change: `edit` of config/keys.yaml, committed. */
export async function mergeRequestClone(origin: string, edit: (text: string) => string): Promise<string> {
  const dir = path.join(await tempRepo(), "mr");
  execFileSync("git", ["clone", "-q", origin, dir]);
  git(dir, "checkout", "-q", "-b", "change");
  const file = path.join(dir, "config/keys.yaml");
  await writeFile(file, edit(await readFile(file, "utf8")));
  git(dir, "commit", "-qam", "change");
  return dir;
}

/** The variables every runner job has, with `bin` first on PATH. */
export const runnerBase = (bin: string): Record<string, string> => ({
  PATH: `${bin}:${process.env.PATH ?? ""}`,
  HOME: process.env.HOME ?? "/tmp",
  NO_COLOR: "1",
  CI: "true",
});

/**
 * Runs bash with `args` — asynchronously: the forge's API stand-in answers from this process,
 * so a synchronous child would wait on a server that cannot answer.
 */
export function bashOutcome(
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ status: code ?? 1, stdout, stderr }));
  });
}
