/**
 * A daemon that refuses an object owned elsewhere notices the registry's changes
 * (docs/user/teams.md): after the operator's `gatesync ownership transfer` to the daemon's
 * environment, or the owner's `release`, its next scheduled run — the commit, the settings and
 * its state unchanged — plans again and takes the object over, with no restart. Real processes:
 * the daemon (`gatesync run`) and the CLI; SQLite states in one directory sharing the registry
 * beside them; a real sandbox.
 */
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { spawnCli } from "../helpers/cli.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { spawnDaemon, stopDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { orgKey } from "../helpers/resources.js";
import { exampleFixtures, testCredentials } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { orgKeysOf, teamConfig, writeTeam } from "./teams-helpers.js";

let sandbox: SandboxHandle | undefined;
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await stopDaemon(daemon);
  daemon = undefined;
  await sandbox?.stop();
  sandbox = undefined;
});
afterAll(async () => {
  await removeTempRepos();
});

const env = { GW_KEY: testCredentials.gatewayKey, GATESYNC_LOG_LEVEL: "silent" };
const cli = (args: string[]): ReturnType<typeof spawnCli> => spawnCli(args, { env });

describe("a daemon refusing objects owned elsewhere", () => {
  it("takes an object over at its next scheduled run after a transfer to it, and after a release", async () => {
    sandbox = await startSandbox({ credentials: testCredentials, fixtures: await exampleFixtures() });
    const s = sandbox;
    const dir = await tempRepo();
    const payments = await writeTeam(dir, "payments", teamConfig("payments", s, { owner: "payments" }), {
      "acme.yaml": orgKey({ name: "acme", rate: 100, per: 60 }),
      "pk.yaml": orgKey({ name: "pk", rate: 10, per: 60 }),
    });
    const applied = await cli(["apply", "-c", payments, "--auto-approve", "--allow-empty-state"]);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);

    const schedule = 'schedule: { interval: 1s, jitter: 0 }\nserver: { listen: "127.0.0.1:0" }';
    const billing = await writeTeam(dir, "billing", teamConfig("billing", s, { owner: "billing", extra: schedule }), {
      "acme.yaml": orgKey({ name: "acme", rate: 777, per: 60 }),
      "pk.yaml": orgKey({ name: "pk", rate: 77, per: 60 }),
    });
    daemon = await spawnDaemon(billing, path.dirname(billing), { GW_KEY: testCredentials.gatewayKey });
    const d = daemon;
    const output = (): string => d.output().slice(-3000);
    await eventually(
      () => d.output(),
      (o) => o.includes("OWNED_ELSEWHERE: OrgKey/acme") && o.includes("OWNED_ELSEWHERE: OrgKey/pk"),
      30_000,
      output,
    );
    // its runs after the refusal are skipped: nothing changed, nothing is sent
    const settled = s.inspect.calls().log.length;
    await new Promise((r) => setTimeout(r, 2_500));
    expect(s.inspect.calls().log.length).toBe(settled);
    expect(orgKeysOf(s).get("acme")?.session.rate).toBe(100);
    expect(orgKeysOf(s).get("pk")?.session.rate).toBe(10);

    const moved = await cli([
      "ownership",
      "transfer",
      "org-key:acme",
      "--interface",
      "gateway",
      "--to",
      "billing",
      "--to-environment",
      "default",
      "--reason",
      "handover",
      "-c",
      billing,
    ]);
    expect(moved.code, moved.stderr).toBe(0);
    await eventually(
      () => orgKeysOf(s).get("acme")?.session.rate,
      (r) => r === 777,
      30_000,
      output,
    );
    expect(d.output()).toContain("the ownership registry changed since the last run: planning again");
    // payments' other key stays payments'
    expect(orgKeysOf(s).get("pk")?.session.rate).toBe(10);

    const released = await cli(["ownership", "release", "org-key:pk", "--interface", "gateway", "--reason", "payments gives pk up", "-c", payments]);
    expect(released.code, released.stderr).toBe(0);
    await eventually(
      () => orgKeysOf(s).get("pk")?.session.rate,
      (r) => r === 77,
      30_000,
      output,
    );
    const listed = await cli(["ownership", "list", "-c", billing, "--format", "json"]);
    const rows = JSON.parse(listed.stdout) as Array<{ object: string; owner: string; environment: string }>;
    expect(rows.map((r) => `${r.object} ${r.owner}`).sort()).toEqual(["org-key:acme billing", "org-key:pk billing"]);
    // and it settles: one write each by billing, then nothing more
    expect(orgKeysOf(s).get("acme")?.writes).toBe(2);
    expect(orgKeysOf(s).get("pk")?.writes).toBe(2);
  }, 120_000);
});
