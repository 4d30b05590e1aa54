/**
 * One gateway, two teams' real git repositories, a PostgreSQL state (docs/user/teams.md): first
 * one daemon serving both teams (each environment its own `source:`, owner and state), then
 * each team's own daemon. Team billing's commit changing team payments' org key is refused in
 * billing's run, naming the owner, and payments' value stays; billing's own key is applied; a
 * team's commit runs only its own environment; billing's orphan policy never deactivates
 * payments' objects.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { createLogger } from "../../src/logger.js";
import { runCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { gitRemote, pushFiles } from "../helpers/git-remote.js";
import { pgUrl, testSchema } from "../helpers/postgres.js";
import { orgKey } from "../helpers/resources.js";
import { call, testCredentials } from "../helpers/sandbox.js";
import { tempRepo } from "../helpers/temp-repo.js";
import { orgKeysOf } from "./teams-helpers.js";
import { sharedTeamGateway } from "./team-gateway.js";

const syncToken = "teams-daemon-sync-token";
const gateway = sharedTeamGateway();

interface Team {
  readonly name: string;
  readonly origin: string;
  push(files: Record<string, string>, message: string): Promise<string>;
}

async function team(name: string, files: Record<string, string>): Promise<Team> {
  const dir = await tempRepo();
  const work = gitRemote(dir);
  const push = (f: Record<string, string>, message: string): Promise<string> => pushFiles(work, f, message);
  await push(files, "initial");
  return { name, origin: path.join(dir, "origin.git"), push };
}

/** An environment entry: the team's repository, its owner, its own state schema. */
const entry = (t: Team, schema: string, orphans = "report"): string => `  ${t.name}-prod:
    owner: ${t.name}
    orphans: ${orphans}
    source: { git: { url: ${JSON.stringify(t.origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
    state: { backend: postgres, urlEnv: PG_URL, schema: ${schema} }`;

const operatorFile = (entries: readonly string[], first: Team): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(first.origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
state: { backend: postgres, urlEnv: PG_URL, schema: ${testSchema()} }
targets:
  gateway: { url: ${gateway.sandbox.urls.gateway}, credentialEnv: GW_KEY }
environments:
${entries.join("\n")}
schedule: { interval: 1h }
deactivationGuard: { allow: true }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
`;

interface Running {
  readonly daemon: Daemon;
  readonly logs: string[];
}

async function daemonOf(text: string): Promise<Running> {
  const dir = await tempRepo();
  await mkdir(path.join(dir, "operator"));
  const file = path.join(dir, "operator", "gatesync.yaml");
  await writeFile(file, text);
  const logs: string[] = [];
  const destination = new Writable({ write: (chunk: Buffer, _e, done) => (logs.push(chunk.toString()), done()) });
  const daemon = await startDaemon({
    config: await loadConfig(file),
    env: { GW_KEY: testCredentials.gatewayKey, SYNC_TOKEN: syncToken, PG_URL: pgUrl },
    logger: createLogger({ level: "info", destination }),
    listen: "127.0.0.1:0",
    watchConfig: false,
  });
  return { daemon, logs };
}

/** Asks for a sync and waits until each environment named ran its source's `commit`. */
async function syncTo(d: Daemon, runs: Record<string, string>): Promise<void> {
  expect((await call(`${d.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).status).toBe(202);
  for (const [name, commit] of Object.entries(runs))
    await eventually(
      () => d.environments.get(name)?.lastRun,
      (r) => r?.commit === commit,
    );
}

const refusal = (id: string, key: string, owner: string): string =>
  `OWNED_ELSEWHERE: ${id} (org-key:${key} on gateway ${gateway.sandbox.urls.gateway.replace(/\/$/, "")}) is owned by team ${owner} (environment ${owner}-prod)`;

describe("one daemon serving two teams' repositories", () => {
  it("refuses billing's write of payments' key in billing's run; each commit runs only its team's environment", async () => {
    const payments = await team("payments", { "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-d1", rate: 100, per: 60 }) });
    const billing = await team("billing", { "config/own.yaml": orgKey({ name: "own", keyId: "billing-d1", rate: 5, per: 60 }) });
    const { daemon, logs } = await daemonOf(operatorFile([entry(payments, testSchema()), entry(billing, testSchema(), "deactivate")], payments));
    try {
      await daemon.firstRun;
      expect(orgKeysOf(gateway.sandbox).get("acme-d1")?.session.rate).toBe(100);
      const paymentsRun = daemon.environments.get("payments-prod")!.lastRun!;
      const commit = await billing.push({ "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-d1", rate: 999, per: 60 }) }, "billing takes acme");
      await syncTo(daemon, { "billing-prod": commit });
      const run = daemon.environments.get("billing-prod")!.lastRun!;
      expect(run.summary?.blocked).toEqual(["OrgKey/acme"]);
      expect(logs.join("")).toContain(refusal("OrgKey/acme", "acme-d1", "payments"));
      const keys = orgKeysOf(gateway.sandbox);
      expect(keys.get("acme-d1")?.session.rate).toBe(100);
      expect(keys.get("acme-d1")?.writes).toBe(1);
      expect(keys.get("billing-d1")?.session.rate).toBe(5);
      // billing's commit is not payments': its environment still runs the commit it had
      expect(daemon.environments.get("payments-prod")!.lastRun!.commit).toBe(paymentsRun.commit);
    } finally {
      await daemon.stop();
    }
  }, 60_000);
});

describe("each team's own daemon", () => {
  it("refuses in billing's daemon; billing's orphan policy never deactivates what it handed to payments", async () => {
    const payments = await team("payments", { "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-d2", rate: 100, per: 60 }) });
    const billing = await team("billing", {
      "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-d2", rate: 777, per: 60 }),
      "config/shared.yaml": orgKey({ name: "shared", keyId: "shared-d2", rate: 3, per: 60 }),
      // a forged owner in the repository's own settings file: the operator's setting, ignored with a note
      "gatesync.yaml": "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nowner: payments\nenvironments:\n  billing-prod:\n    owner: payments\n",
    });
    const a = await daemonOf(operatorFile([entry(payments, testSchema())], payments));
    await a.daemon.firstRun;
    const bText = operatorFile([entry(billing, testSchema(), "deactivate")], billing);
    const b = await daemonOf(bText);
    try {
      await b.daemon.firstRun;
      const first = b.daemon.environments.get("billing-prod")!.lastRun!;
      expect(first.summary?.blocked).toEqual(["OrgKey/acme"]);
      expect(b.logs.join("")).toContain(refusal("OrgKey/acme", "acme-d2", "payments"));
      expect(first.ignoredSettings?.map((d) => d.path)).toEqual(expect.arrayContaining(["owner", "environments.billing-prod.owner"]));
      expect(orgKeysOf(gateway.sandbox).get("acme-d2")?.session.rate).toBe(100);
      expect(orgKeysOf(gateway.sandbox).get("shared-d2")?.writes).toBe(1);
      // the operator hands billing's key to payments; billing then drops it, under orphans: deactivate
      const bFile = path.join(await tempRepo({ "gatesync.yaml": bText }), "gatesync.yaml");
      const moved = await runCli(
        [
          "ownership",
          "transfer",
          "org-key:shared-d2",
          "--interface",
          "gateway",
          "--to",
          "payments",
          "--to-environment",
          "payments-prod",
          "--reason",
          "handover",
          "-c",
          bFile,
          "--env",
          "billing-prod",
        ],
        { GW_KEY: testCredentials.gatewayKey, PG_URL: pgUrl },
      );
      expect(moved.stderr).toBe("");
      const commit = await billing.push(
        {
          "config/acme.yaml": orgKey({ name: "other", keyId: "billing-d2", rate: 1, per: 60 }),
          "config/shared.yaml": orgKey({ name: "more", keyId: "billing-d2b", rate: 1, per: 60 }),
        },
        "billing drops acme and shared",
      );
      await syncTo(b.daemon, { "billing-prod": commit });
      // the one orphan is not withheld by the guard: it is refused for its owner
      expect(b.daemon.environments.get("billing-prod")!.lastRun?.plan).toMatchObject({ orphan: 1, deactivate: 0, blocked: 0 });
      for (const id of ["acme-d2", "shared-d2"]) {
        const key = orgKeysOf(gateway.sandbox).get(id);
        expect(key?.session.is_inactive).not.toBe(true);
        expect(key?.writes).toBe(1);
      }
      expect(orgKeysOf(gateway.sandbox).get("billing-d2")?.writes).toBe(1);
    } finally {
      await b.daemon.stop();
      await a.daemon.stop();
    }
  }, 60_000);
});
