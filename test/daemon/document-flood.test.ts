/**
 * One file of empty documents: 5 MB of `---` lines is 1.3 million YAML documents. Parsing them
 * all took ~1.3 GB of heap, so a daemon under the manifest's heap settings died on the commit
 * that added it — and on every restart, the bad commit being the branch head. The documents
 * are now counted as they are composed, and a file past limits.maxDocumentsPerFile is refused
 * with a located error while the daemon keeps the last good commit.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { gitRemote } from "../helpers/git-remote.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { sandboxTargets, spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { git } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let sandbox: SandboxHandle;
let daemon: DaemonProcess | undefined;
afterAll(async () => {
  daemon?.child.kill("SIGKILL");
  await sandbox?.stop();
  await removeTempRepos();
});

/** The heap settings the Kubernetes manifest gives the daemon. */
async function manifestNodeOptions(): Promise<string> {
  const manifest = await readFile(path.join(projectRoot, "examples/k8s/gatesync.yaml"), "utf8");
  const m = /name: NODE_OPTIONS, value: "([^"]+)"/.exec(manifest);
  if (m === null) throw new Error("examples/k8s/gatesync.yaml sets no NODE_OPTIONS");
  return m[1]!;
}

interface Status {
  commit: string | null;
  lastRun: { result: string; revision: string | null; errors?: Array<{ file: string; line: number; code?: string; message: string }> } | null;
}

let dir = "";
let work = "";
beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo();
  work = gitRemote(dir);
  await import("node:fs/promises").then(async (fs) => fs.mkdir(path.join(work, "config")));
  await writeFile(path.join(work, "config/k.yaml"), doc("OrgKey", "k", "keyId: k"));
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", "good");
  git(work, "push", "-q", "origin", "HEAD:main");
});

describe("a file of 1.3 million empty documents", () => {
  it("is refused with a located error under the manifest's heap settings; the daemon stays up on the last good commit", async () => {
    const good = git(work, "rev-parse", "HEAD");
    await writeFile(
      path.join(dir, "gatesync.yaml"),
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${path.join(dir, "origin.git")}, branch: main, subdirectory: config, cacheDir: ./cache } }
${sandboxTargets(sandbox)}state: { backend: sqlite, path: ./state.db }
schedule: { interval: 1s, jitter: 0 }
server: { listen: "127.0.0.1:0" }
`,
    );
    daemon = await spawnDaemon(path.join(dir, "gatesync.yaml"), dir, { NODE_OPTIONS: await manifestNodeOptions() });
    const status = async (): Promise<Status> => (await call(`${daemon!.url}/status`)).body as Status;
    await eventually(status, (s) => s.commit === good, 60_000);

    const flood = "---\n".repeat(1_310_000);
    expect(flood.length).toBeGreaterThan(5_000_000);
    await writeFile(path.join(work, "config/empty.yaml"), flood);
    git(work, "add", "-A");
    git(work, "commit", "-q", "-m", "a file of empty documents");
    git(work, "push", "-q", "origin", "HEAD:main");
    const bad = git(work, "rev-parse", "HEAD");

    const refused = await eventually(
      status,
      (s) => s.lastRun?.revision === bad,
      120_000,
      () => `\n${daemon!.output().slice(-2000)}`,
    );
    expect(refused.lastRun?.result).toBe("invalid");
    expect(refused.commit).toBe(good);
    expect(refused.lastRun?.errors?.[0]).toMatchObject({ file: "config/empty.yaml", line: 1001 });
    expect(refused.lastRun?.errors?.[0]?.message).toContain("more than 1000 YAML documents");
    // still up a few runs later (every run meets the same head), still on the good commit
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(daemon.child.exitCode).toBeNull();
    expect((await call(`${daemon.url}/healthz`)).status).toBe(200);
    expect((await status()).commit).toBe(good);
  }, 240_000);
});
