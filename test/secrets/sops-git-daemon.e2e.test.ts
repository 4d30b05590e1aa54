/**
 * Files a commit references come from that commit: a daemon with a git source (`gatesync run`,
 * a real process; its own gatesync.yaml in a directory of its own, no secrets there) applies an
 * org key whose HMAC string is a `${sops:}` of a SOPS file committed below
 * `secrets/staging` (written with Debian's age by test/helpers/sops-file.ts). A rotation commit —
 * the value encrypted anew, pushed — is applied; a commit whose SOPS file is a link to a file
 * on the daemon's own disk is refused whole (PATH_ESCAPE), nothing of the linked file sent; and
 * `secrets.fromDaemonDisk: [sops]` is the explicit way to read the daemon's disk instead.
 * On the old code the first run failed: `secret file app.enc.yaml does not exist in <daemon
 * dir>/secrets/staging`.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { sandboxTargets, spawnDaemon, stopDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { git } from "../helpers/git-repo.js";
import { gitRemote, pushFiles } from "../helpers/git-remote.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import { ageIdentity, sopsYaml, hmacOrgKey } from "../helpers/sops-file.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const syncToken = "sops-git-daemon-sync-token-7c1d";
const daemons: DaemonProcess[] = [];
const sandboxes: SandboxHandle[] = [];

afterAll(async () => {
  for (const d of daemons) await stopDaemon(d);
  for (const s of sandboxes) await s.stop();
  await removeTempRepos();
});

const orgKey = hmacOrgKey("${sops:app.enc.yaml#acme.hmac}");

interface Status {
  readonly commit: string | null;
  readonly lastRun: { readonly result: string; readonly revision: string | null } | null;
}

/** The daemon's own gatesync.yaml, beside nothing of the repository's. */
const daemonConfig = (origin: string, s: SandboxHandle, secrets: string): string =>
  `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
${sandboxTargets(s)}state: { backend: sqlite, path: ./state.db }
secrets: ${secrets}
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
`;

describe("${sops:} with a git source", () => {
  it("applies a committed encrypted value and its rotation, and refuses a link out of the repository", async () => {
    const sandbox = await testSandbox();
    sandboxes.push(sandbox);
    const id = ageIdentity();
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const first = await pushFiles(
      work,
      { "config/org-key.yaml": orgKey, "secrets/staging/app.enc.yaml": sopsYaml({ acme: { hmac: "first-committed-hmac-4f2a" } }, id.recipient) },
      "acme's HMAC string, encrypted for staging",
    );
    const home = await tempRepo({ "gatesync.yaml": daemonConfig(path.join(dir, "origin.git"), sandbox, "{ fileRoot: ./secrets/staging }") });
    // the daemon's own disk holds a SOPS file of that name too: nothing reads it unless told to
    await mkdir(path.join(home, "secrets/staging"), { recursive: true });
    const onDaemonDisk = path.join(home, "secrets/staging/app.enc.yaml");
    await writeFile(onDaemonDisk, sopsYaml({ acme: { hmac: "the-daemons-own-hmac-9b7e" } }, id.recipient));
    const daemon = await spawnDaemon("gatesync.yaml", home, { SOPS_AGE_KEY: id.secret, SYNC_TOKEN: syncToken, HOME: home });
    daemons.push(daemon);
    const status = async (): Promise<Status> => (await call(`${daemon.url}/status`)).body as Status;
    const context = (): string => `\n${daemon.output().slice(-3000)}`;
    const hmac = (): unknown => (sandbox.inspect.store.orgKeys.get("acme")?.session as { hmac_string?: string } | undefined)?.hmac_string;
    const sync = async (): Promise<void> => {
      expect((await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).status).toBe(202);
    };

    await eventually(status, (s) => s.lastRun?.revision === first && s.lastRun.result === "applied", 60_000, context);
    expect(hmac()).toBe("first-committed-hmac-4f2a");

    // the rotation: the value encrypted anew, reviewed, pushed
    const rotated = await pushFiles(
      work,
      { "secrets/staging/app.enc.yaml": sopsYaml({ acme: { hmac: "rotated-committed-hmac-61cd" } }, id.recipient) },
      "rotate acme's HMAC string",
    );
    await sync();
    await eventually(status, (s) => s.lastRun?.revision === rotated && s.lastRun.result === "applied", 60_000, context);
    expect(hmac()).toBe("rotated-committed-hmac-61cd");

    // a commit without the file (left out by a .gitignore, say): refused, naming the repository's directory, not the daemon's
    git(work, "rm", "-q", "secrets/staging/app.enc.yaml");
    const without = await pushFiles(work, {}, "the SOPS file left out");
    await sync();
    await eventually(status, (s) => s.lastRun?.revision === without && s.lastRun.result !== "applied", 60_000, context);
    expect(daemon.output()).toContain("secret file app.enc.yaml does not exist in the repository's secrets/staging");
    expect(hmac()).toBe("rotated-committed-hmac-61cd");

    // a commit whose SOPS file is a link to the daemon's own file: refused, nothing of it sent
    await mkdir(path.join(work, "secrets/staging"), { recursive: true });
    await symlink(onDaemonDisk, path.join(work, "secrets/staging/app.enc.yaml"));
    const linked = await pushFiles(work, {}, "read the daemon's own SOPS file through a link");
    const writes = sandbox.inspect.calls().log.filter((c) => c.method !== "GET").length;
    await sync();
    await eventually(status, (s) => s.lastRun?.revision === linked && s.lastRun.result !== "applied", 60_000, context);
    expect(daemon.output()).toMatch(
      /PATH_ESCAPE[^\n]*\$\{sops:app\.enc\.yaml#acme\.hmac\} leaves the secrets directory the repository's secrets\/staging through a link/,
    );
    expect(hmac()).toBe("rotated-committed-hmac-61cd");
    expect(sandbox.inspect.calls().log.filter((c) => c.method !== "GET").length).toBe(writes);
    expect(daemon.output()).not.toContain("the-daemons-own-hmac-9b7e");
    expect(daemon.output()).not.toContain("rotated-committed-hmac-61cd");
  }, 240_000);

  it("reads the daemon's own disk where secrets.fromDaemonDisk says so, and only there", async () => {
    const sandbox = await testSandbox();
    sandboxes.push(sandbox);
    const id = ageIdentity();
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const committed = await pushFiles(
      work,
      { "config/org-key.yaml": orgKey, "secrets/staging/app.enc.yaml": sopsYaml({ acme: { hmac: "committed-but-not-read-0d3e" } }, id.recipient) },
      "acme's HMAC string",
    );
    const home = await tempRepo({
      "gatesync.yaml": daemonConfig(path.join(dir, "origin.git"), sandbox, "{ fileRoot: ./secrets/staging, fromDaemonDisk: [sops] }"),
      "secrets/staging/app.enc.yaml": sopsYaml({ acme: { hmac: "from-the-daemon-disk-5a8c" } }, id.recipient),
    });
    const daemon = await spawnDaemon("gatesync.yaml", home, { SOPS_AGE_KEY: id.secret, SYNC_TOKEN: syncToken, HOME: home });
    daemons.push(daemon);
    const status = async (): Promise<Status> => (await call(`${daemon.url}/status`)).body as Status;
    await eventually(
      status,
      (s) => s.lastRun?.revision === committed && s.lastRun.result === "applied",
      60_000,
      () => daemon.output().slice(-3000),
    );
    expect((sandbox.inspect.store.orgKeys.get("acme")?.session as { hmac_string?: string }).hmac_string).toBe("from-the-daemon-disk-5a8c");
  }, 120_000);
});
