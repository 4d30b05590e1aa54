/**
 * End to end with the daemon: a team's git repository holds a SOPS file written by the real
 * `sops` tool (test/fixtures/sops/README.md: token.enc.json, and message.enc.yaml — the same
 * age recipient, another value — as its rotation). The daemon (`gatesync run`, its own checkout,
 * the age identity in its environment) applies the org key whose HMAC string comes from it; the
 * merge request that rotates it is planned by the job that has no key, against the daemon's
 * state (`GET /state`): it validates, plans the key as changed and shows no value; merged and
 * deployed, the daemon plans it as a change and the sandbox holds the new value. No output holds
 * a decrypted value.
 */
import { execFileSync } from "node:child_process";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { spawnCli } from "../helpers/cli.js";
import type { CliResult } from "../helpers/cli.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { sandboxTargets, spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { git } from "../helpers/git-repo.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import { rawStateText } from "../helpers/state-file.js";
import { hmacOrgKey } from "../helpers/sops-file.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const fixtures = path.resolve(import.meta.dirname, "../fixtures/sops");
/** token.enc.json's one value (message.enc.yaml's, `hello`, is too short to search every output for). */
const tokenValue = "t00m4nys3cr3tz";
const stateToken = "sops-daemon-state-token-5b2c";
const syncToken = "sops-daemon-sync-token-91aa";

let sandbox: SandboxHandle | undefined;
let daemon: DaemonProcess | undefined;

afterAll(async () => {
  daemon?.child.kill("SIGTERM");
  await sandbox?.stop();
  await removeTempRepos();
});

const orgKey = hmacOrgKey("${sops:hmac.enc.json}");

interface Status {
  readonly commit: string | null;
  readonly synced: boolean;
  readonly lastRun: { readonly result: string; readonly revision: string | null } | null;
}

interface PlanJson {
  readonly changes: ReadonlyArray<{ readonly id: string; readonly action: string; readonly notCompared?: unknown }>;
}

describe("${sops:} through the daemon and a merge request's keyless plan", () => {
  it("applies the decrypted value, plans the rotation without the key as a change it did not decrypt, and applies it once deployed", async () => {
    sandbox = await testSandbox();
    const key = await readFile(path.join(fixtures, "keys.txt"), "utf8");
    // the team's repository: the daemon's settings, one org key, its SOPS file
    const work = await tempRepo({
      "config/org-key.yaml": orgKey,
      "gatesync.yaml": `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\n${sandboxTargets(sandbox)}state: { backend: sqlite, path: ./.gatesync/state.db }\nsecrets: { fileRoot: ./secrets }\nschedule: { interval: 1h }\nserver: { listen: "127.0.0.1:0", stateTokenEnv: GATESYNC_STATE_TOKEN, syncTokenEnv: SYNC_TOKEN }\n`,
      ".gitignore": ".gatesync/\n",
    });
    await mkdir(path.join(work, "secrets"));
    await copyFile(path.join(fixtures, "token.enc.json"), path.join(work, "secrets/hmac.enc.json"));
    git(work, "init", "-q", "-b", "main");
    git(work, "add", "-A");
    git(work, "commit", "-qm", "acme's HMAC string from a SOPS file");
    const origin = path.join(await tempRepo(), "origin.git");
    execFileSync("git", ["clone", "-q", "--bare", work, origin]);
    const deployed = path.join(await tempRepo(), "deployed");
    execFileSync("git", ["clone", "-q", origin, deployed]);

    daemon = await spawnDaemon("gatesync.yaml", deployed, { SOPS_AGE_KEY: key, GATESYNC_STATE_TOKEN: stateToken, SYNC_TOKEN: syncToken, HOME: deployed });
    const status = async (): Promise<Status> => (await call(`${daemon!.url}/status`)).body as Status;
    const context = (): string => `\n${daemon!.output().slice(-3000)}`;
    await eventually(status, (s) => s.synced && s.lastRun?.result === "applied", 60_000, context);
    const hmacOf = (): unknown => (sandbox!.inspect.store.orgKeys.get("acme")?.session as { hmac_string?: string } | undefined)?.hmac_string;
    expect(hmacOf()).toBe(tokenValue);

    // the merge request: a fresh clone, the rotation on a branch, the job without any age identity
    const mr = path.join(await tempRepo(), "mr");
    execFileSync("git", ["clone", "-q", origin, mr]);
    const outputs: string[] = [];
    const job = async (...args: string[]): Promise<CliResult> => {
      const { SOPS_AGE_KEY: _key, SOPS_AGE_KEY_FILE: _file, ...machine } = process.env;
      const r = await spawnCli([...args, "--config", "gatesync.yaml"], {
        env: { ...machine, HOME: mr, CI: "true", GATESYNC_STATE_URL: daemon!.url, GATESYNC_STATE_TOKEN: stateToken },
        cwd: mr,
      });
      outputs.push(r.stdout, r.stderr);
      return r;
    };
    const acme = (r: CliResult): PlanJson["changes"][number] | undefined => (JSON.parse(r.stdout) as PlanJson).changes.find((c) => c.id === "OrgKey/acme");
    // before the change: the encrypted value is the one the daemon applied
    const unchanged = await job("plan", "--format", "json");
    expect(unchanged.code, unchanged.stderr).toBe(0);
    expect(acme(unchanged)).toMatchObject({ action: "no-op", notCompared: [{ path: "hmac_string", encrypted: "unchanged" }] });
    git(mr, "checkout", "-q", "-b", "rotate-acme-hmac");
    await copyFile(path.join(fixtures, "message.enc.yaml"), path.join(mr, "secrets/hmac.enc.json"));
    git(mr, "commit", "-qam", "rotate acme's HMAC string (sops)");
    expect((await job("validate")).code).toBe(0);
    const planned = await job("plan", "--format", "json");
    expect(planned.code, planned.stderr).toBe(0);
    expect(acme(planned)).toMatchObject({ action: "update", notCompared: [{ path: "hmac_string", encrypted: "changed" }] });
    const comment = await job("plan", "--format", "markdown");
    expect(comment.stdout).toContain("`OrgKey/acme` `hmac_string`: encrypted value changed since the last apply: counted as a change");
    expect(hmacOf()).toBe(tokenValue);

    // merged and deployed: the daemon plans the rotation as a change and applies it
    git(mr, "push", "-q", "origin", "rotate-acme-hmac:main");
    git(deployed, "pull", "-q", "--ff-only");
    // the org key's writes, batched or not
    const keyWrites = (): number => sandbox!.inspect.calls().log.filter((c) => c.method !== "GET" && c.path.includes("/org/keys/acme")).length;
    const writes = keyWrites();
    expect((await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).status).toBe(202);
    await eventually(hmacOf, (v) => v === "hello", 60_000, context);
    expect(keyWrites()).toBeGreaterThan(writes);
    await eventually(status, (s) => s.lastRun?.result === "applied", 30_000, context);

    // and the job that plans main now finds nothing to do
    git(mr, "checkout", "-q", "main");
    git(mr, "pull", "-q", "--ff-only");
    const after = await job("plan", "--format", "json");
    expect(acme(after)).toMatchObject({ action: "no-op", notCompared: [{ path: "hmac_string", encrypted: "unchanged" }] });

    outputs.push(daemon.output(), await rawStateText(path.join(deployed, ".gatesync/state.db")));
    expect(outputs.filter((o) => o.includes(tokenValue))).toEqual([]);
  }, 240_000);
});
