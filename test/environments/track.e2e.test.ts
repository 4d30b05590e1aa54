/**
 * `track:` (issue 46) with a real git repository — a bare remote in a temp dir, commits and tags
 * pushed to it — and a daemon of two environments over two sandboxes: `production` follows the
 * newest tag matching `v*` (by semantic version: v1.2.10 over v1.2.9, a prerelease below its
 * release), `staging` follows the branch `release`. Commits on main and tags that do not match
 * reach neither; a tag pushed later is followed. The merge-request comment says, per environment,
 * whether a merge reaches it at once, when tagged, or by promotion (`canary` is promoted from
 * staging). A reload that changes a `track:` rebuilds the daemon.
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import type { GatesyncConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { eventually } from "../helpers/eventually.js";
import { gitRemote, trackedEnvironmentsConfig } from "../helpers/git-remote.js";
import { doc } from "../helpers/plan.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { runCli } from "../helpers/cli.js";

const syncToken = "track-sync-token";
const stateToken = "track-state-token";
let staging: SandboxHandle;
let production: SandboxHandle;
let canary: SandboxHandle;
let work: string;
let daemon: Daemon;
/** Seconds of the next commit's date: each commit a minute after the one before, whatever the clock says. */
let clock = 1_790_000_000;

/** git in the team's checkout, each commit dated by `clock`. */
const git = (...args: string[]): string => {
  const date = `${clock} +0000`;
  return execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd: work,
    encoding: "utf8",
    env: { ...process.env, GIT_COMMITTER_DATE: date, GIT_AUTHOR_DATE: date },
  }).trim();
};

/** Commits the key at `rate` on `branch` (created from main when new) and pushes it; the commit. */
async function commitRate(branch: string, rate: number): Promise<string> {
  clock += 60;
  if (git("symbolic-ref", "--short", "HEAD") !== branch) git("checkout", "-q", ...(git("branch", "--list", branch) !== "" ? [branch] : ["-b", branch, "main"]));
  await mkdir(path.join(work, "config"), { recursive: true });
  await writeFile(path.join(work, "config", "keys.yaml"), doc("OrgKey", "acme", `keyId: org-acme\nrate: ${rate}`));
  git("add", "-A");
  git("commit", "-q", "-m", `rate ${rate} on ${branch}`);
  git("push", "-q", "origin", branch);
  return git("rev-parse", "HEAD");
}

/** Tags `commit` (annotated when `message` is given, as `git tag -a` does) and pushes the tag. */
function tag(name: string, commit: string, message?: string): void {
  git("tag", ...(message === undefined ? [] : ["-a", "-m", message]), name, commit);
  git("push", "-q", "origin", `refs/tags/${name}`);
}

const rateIn = (s: SandboxHandle): number | undefined => s.inspect.store.orgKeys.get("org-acme")?.session.rate as number | undefined;

/** Asks the daemon to sync (as a person or CI does) and waits until both environments ran after it. */
async function sync(): Promise<void> {
  const asked = new Date().toISOString();
  const answer = await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
  expect(answer.status).toBe(202);
  for (const name of ["staging", "production"]) {
    await eventually(
      () => daemon.environments.get(name)?.lastRun,
      (r) => r !== undefined && r.startedAt >= asked,
    );
  }
}

let tagged: { v1_2_9: string; v1_2_10: string; rc: string };
let operatorFile: string;
/** The configs the daemon asked to be rebuilt with (a reload that changes a `track:`). */
const restarts: GatesyncConfig[] = [];
let releaseHead: string;

beforeAll(async () => {
  staging = await testSandbox();
  production = await testSandbox();
  canary = await testSandbox();
  const dir = await tempRepo();
  work = gitRemote(dir);
  // v1.2.10 tags the oldest commit: by date v1.2.9 would win, by version v1.2.10 does
  const oldest = await commitRate("main", 1);
  const middle = await commitRate("main", 2);
  const newest = await commitRate("main", 3);
  tag("v1.2.10", oldest, "release 1.2.10");
  tag("v1.2.9", middle);
  tag("v1.2.10-rc.1", newest, "candidate");
  tag("nightly-9.9.9", newest);
  tagged = { v1_2_10: oldest, v1_2_9: middle, rc: newest };
  releaseHead = await commitRate("release", 7);
  git("checkout", "-q", "main");
  operatorFile = path.join(dir, "operator", "gatesync.yaml");
  await mkdir(path.dirname(operatorFile));
  await writeFile(
    operatorFile,
    trackedEnvironmentsConfig(
      dir,
      {
        staging: { gateway: staging.urls.gateway, track: "{ branch: release }" },
        production: { gateway: production.urls.gateway, track: '{ tag: "v*" }' },
        canary: { gateway: canary.urls.gateway, track: "{ promotedFrom: staging }" },
      },
      `schedule: { interval: 1h }\nserver: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN, stateTokenEnv: STATE_TOKEN }\n`,
    ),
  );
  daemon = await startDaemon({
    config: await loadConfig(operatorFile),
    env: { GW_KEY: testCredentials.gatewayKey, SYNC_TOKEN: syncToken, STATE_TOKEN: stateToken },
    logger: silentLogger(),
    listen: "127.0.0.1:0",
    watchConfig: false,
    onRestart: async (config) => {
      restarts.push(config);
      return Promise.resolve();
    },
  });
  expect((await daemon.firstRun).result).toBe("applied");
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  await staging?.stop();
  await production?.stop();
  await canary?.stop();
  await removeTempRepos();
});

describe("track: an environment follows a branch of its own, or the newest matching tag", () => {
  it("applies the newest tag by semantic version (not the newest commit, the main branch, a prerelease or a tag that does not match)", () => {
    expect(daemon.environments.get("production")?.lastRun?.commit).toBe(tagged.v1_2_10);
    expect(rateIn(production)).toBe(1);
    expect(daemon.environments.get("staging")?.lastRun?.commit).toBe(releaseHead);
    expect(rateIn(staging)).toBe(7);
  });

  it("ignores commits on the branch and tags that do not match; follows a matching tag pushed later", async () => {
    const unreleased = await commitRate("main", 4);
    tag("other-2.0.0", unreleased);
    tag("release-v9.0.0", tagged.v1_2_9);
    await sync();
    expect(daemon.environments.get("production")?.lastRun?.commit).toBe(tagged.v1_2_10);
    expect(rateIn(production)).toBe(1);
    // the release, tagged later (a lightweight tag this time)
    tag("v1.3.0", unreleased);
    await sync();
    expect(daemon.environments.get("production")?.lastRun?.commit).toBe(unreleased);
    expect(rateIn(production)).toBe(4);
    expect(rateIn(staging)).toBe(7);
  }, 60_000);

  it("a branch-tracking environment follows its own branch, and the tag-tracking one stays on its tag", async () => {
    const next = await commitRate("release", 8);
    git("checkout", "-q", "main");
    await sync();
    expect(daemon.environments.get("staging")?.lastRun?.commit).toBe(next);
    expect(rateIn(staging)).toBe(8);
    expect(rateIn(production)).toBe(4);
  }, 60_000);

  it("`gatesync plan` of the environments plans each at the commit it follows: nothing to change where the daemon applied it", async () => {
    // one environment: release's head, not main's (which would change the rate)
    const one = await runCli(["plan", "-c", operatorFile, "--format", "json", "--env", "staging"], { GW_KEY: testCredentials.gatewayKey });
    expect((JSON.parse(one.stdout) as { summary: unknown }).summary, one.stderr).toMatchObject({ create: 0, update: 0 });
    // without --env: staging at release's head, production at v1.3.0 (one fetch each), canary at main's head
    const all = await runCli(["plan", "-c", operatorFile, "--format", "json"], { GW_KEY: testCredentials.gatewayKey });
    const plans = (JSON.parse(all.stdout) as { environments: Record<string, { summary: { create: number; update: number } }> }).environments;
    expect(plans.staging?.summary).toMatchObject({ create: 0, update: 0 });
    expect(plans.production?.summary).toMatchObject({ create: 0, update: 0 });
  }, 60_000);
});

/** The team's gatesync.yaml in a merge request's checkout: the CLI's settings on a laptop (the daemon's say what each environment follows). */
const teamSettings = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
environments:
  staging: { targets: { gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY } } }
  production: { targets: { gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY } } }
  canary: { targets: { gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY } } }
`;

describe("a reload", () => {
  it("rebuilds the daemon when an environment's `track:` changes (another ref is another source)", async () => {
    const text = await readFile(operatorFile, "utf8");
    await writeFile(operatorFile, text.replace('track: { tag: "v*" }', 'track: { tag: "release-*" }'));
    try {
      await daemon.reload("test");
      await eventually(
        () => restarts.length,
        (n) => n === 1,
      );
      expect(restarts[0]!.environments?.find((e) => e.name === "production")?.track).toEqual({ tag: "release-*" });
    } finally {
      await writeFile(operatorFile, text);
    }
  });
});

describe("the merge-request comment", () => {
  /** The comment's line for `environment`, planned in a fresh clone of a change, for a merge request into `target`. */
  async function commentLines(target: string): Promise<Record<string, string>> {
    const checkout = await tempRepo();
    execFileSync("git", ["clone", "-q", path.join(work, "..", "origin.git"), checkout], { stdio: "ignore" });
    await writeFile(path.join(checkout, "config", "keys.yaml"), doc("OrgKey", "acme", "keyId: org-acme\nrate: 5"));
    await writeFile(path.join(checkout, "gatesync.yaml"), teamSettings);
    const out = await runCli(["plan", "-c", path.join(checkout, "gatesync.yaml"), "--format", "markdown"], {
      GW_KEY: testCredentials.gatewayKey,
      GATESYNC_STATE_URL: daemon.url,
      GATESYNC_STATE_TOKEN: stateToken,
      GITHUB_BASE_REF: target,
    });
    expect(out.stderr).not.toContain("error");
    const lines: Record<string, string> = {};
    for (const name of ["staging", "production", "canary"]) lines[name] = out.stdout.split("\n").find((l) => l.startsWith(`- \`${name}\`:`)) ?? "";
    return lines;
  }

  it("says per environment whether a merge reaches it at once, when tagged, or after a promotion and from where", async () => {
    const intoMain = await commentLines("main");
    expect(intoMain.staging).toContain("a merge does not reach it: it follows `release`, not `main`");
    expect(intoMain.production).toContain("a merge reaches it when tagged: it applies the newest tag matching `v*`");
    expect(intoMain.canary).toContain("a merge waits for promotion from `staging`");
    // each line still says what would change there
    expect(intoMain.staging).toMatch(/update/);
    const intoRelease = await commentLines("release");
    expect(intoRelease.staging).toContain("a merge reaches it at once (it follows `release`)");
    expect(intoRelease.production).toContain("when tagged");
  }, 60_000);
});
