/**
 * A `{ tag: "v*" }` track with a tag that is not a semantic version (docs/user/environments.md),
 * against a real `gatesync run` process over a real git repository: the newest semantic version
 * is applied (not the stray tag on the newest commit, as commit-date order would take), and the
 * process warns once per stray tag — a pino JSON line with a static message, the tag in a field —
 * not at every fetch; a second stray tag pushed later is warned of once too.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { spawnDaemon, stopDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { git } from "../helpers/git-repo.js";
import { gitRemote, pushFiles, trackedEnvironmentsConfig } from "../helpers/git-remote.js";
import { doc } from "../helpers/plan.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const syncToken = "stray-tag-sync-token";
const message = "a tag that is not a semantic version is passed over: the newest version is followed";
let production: SandboxHandle;
let daemon: DaemonProcess;
let work: string;

const keys = (rate: number): Record<string, string> => ({ "config/keys.yaml": doc("OrgKey", "acme", `keyId: org-acme\nrate: ${rate}`) });
const rate = (): unknown => production.inspect.store.orgKeys.get("org-acme")?.session.rate;
const tag = (name: string, commit: string): void => {
  git(work, "tag", name, commit);
  git(work, "push", "-q", "origin", `refs/tags/${name}`);
};
/** The daemon's JSON log lines with the stray-tag warning. */
const warnings = (): Array<Record<string, unknown>> =>
  daemon
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === message);
const sync = async (): Promise<void> => {
  const answer = await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
  expect(answer.status).toBe(202);
};
/** A sync, and its run ended: the daemon has then logged `ended` runs in all. */
const syncedRun = async (ended: number): Promise<void> => {
  await sync();
  await eventually(
    runsEnded,
    (n) => n >= ended,
    30_000,
    () => daemon.output().slice(-2000),
  );
};
/** Runs ended so far, as the daemon logged them. */
const runsEnded = (): number => (daemon.output().match(/"msg":"run (?:finished|ended)[^"]*"/g) ?? []).length;

beforeAll(async () => {
  production = await testSandbox();
  const dir = await tempRepo();
  work = gitRemote(dir);
  const v100 = await pushFiles(work, keys(10), "1.0.0");
  const v110 = await pushFiles(work, keys(20), "1.1.0");
  // the newest commit, tagged with a name that is no version: by commit date it would win
  const stray = await pushFiles(work, keys(99), "an experiment");
  tag("v1.0.0", v100);
  tag("v1.1.0", v110);
  tag("v-experiment", stray);
  const config = path.join(dir, "gatesync.yaml");
  await writeFile(
    config,
    trackedEnvironmentsConfig(
      dir,
      { production: { gateway: production.urls.gateway, track: '{ tag: "v*" }' } },
      `schedule: { interval: 1h }\nserver: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }\n`,
    ),
  );
  daemon = await spawnDaemon(config, dir, { GW_KEY: testCredentials.gatewayKey, SYNC_TOKEN: syncToken });
}, 60_000);

afterAll(async () => {
  await stopDaemon(daemon);
  await production?.stop();
  await removeTempRepos();
});

describe("a { tag: GLOB } track with a tag that is not a semantic version", () => {
  it("applies the newest semantic version and warns once per stray tag, not at every fetch", async () => {
    await eventually(rate, (x) => x === 20, 60_000);
    await eventually(warnings, (w) => w.length >= 1, 10_000);
    const before = runsEnded();
    // one fetch after another: syncs sent while a run is on its way are folded into one run
    for (let i = 1; i <= 3; i++) await syncedRun(before + i);
    expect(rate()).toBe(20);
    expect(warnings().map((w) => [w.level, w.tag, w.followed])).toEqual([[40, "v-experiment", "v1.1.0"]]);
    // a second stray tag: warned of once, by name; the first is not said again
    tag("v-nightly", git(work, "rev-parse", "HEAD"));
    await sync();
    await eventually(
      warnings,
      (w) => w.length >= 2,
      30_000,
      () => daemon.output().slice(-3000),
    );
    await syncedRun(runsEnded() + 1);
    expect(warnings().map((w) => w.tag)).toEqual(["v-experiment", "v-nightly"]);
    expect(rate()).toBe(20);
  }, 120_000);
});
