/**
 * Two teams, one gateway (docs/user/teams.md), through the command line against a real sandbox
 * and SQLite states sharing one ownership registry: team billing's change of team payments' org
 * key is refused by its plan and its apply (OWNED_ELSEWHERE, naming the owner) while the rest of
 * its plan goes ahead and payments' value stays; a transfer moves management with no call until
 * the new owner applies; the old owner's orphan policy never deactivates what it gave away.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { orgKey } from "../helpers/resources.js";
import { callsOf, orgKeysOf, teamConfig, writeTeam } from "./teams-helpers.js";

let sandbox: SandboxHandle;
let dir: string;
const env = { GW_KEY: testCredentials.gatewayKey, GATESYNC_LOG_LEVEL: "warn" };

beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo();
});
afterAll(async () => {
  await sandbox.stop();
  await removeTempRepos();
});

const apply = (config: string): ReturnType<typeof runCli> => runCli(["apply", "-c", config, "--auto-approve", "--allow-empty-state"], env);
const plan = (config: string): ReturnType<typeof runCli> => runCli(["plan", "-c", config, "--detailed-exitcode"], env);

describe("two teams on one gateway", () => {
  let payments: string;
  let billing: string;

  it("refuses one team's write of the other's object, by name, and plans the rest", async () => {
    payments = await writeTeam(dir, "payments", teamConfig("payments", sandbox, { owner: "payments", orphans: "deactivate" }), {
      "acme.yaml": orgKey({ name: "acme", rate: 100, per: 60 }),
    });
    expect((await apply(payments)).code).toBe(0);
    expect(orgKeysOf(sandbox).get("acme")?.session.rate).toBe(100);

    billing = await writeTeam(dir, "billing", teamConfig("billing", sandbox, { owner: "billing" }), {
      "acme.yaml": orgKey({ name: "acme", rate: 200, per: 60 }),
      "own.yaml": orgKey({ name: "billing-own", rate: 5, per: 60 }),
    });
    const planned = await plan(billing);
    const refusal = `OWNED_ELSEWHERE: OrgKey/acme (org-key:acme on gateway ${sandbox.urls.gateway.replace(/\/$/, "")}) is owned by team payments (environment default)`;
    expect(planned.stdout).toContain(refusal);
    // blocked (3), and the rest planned: billing's own key is a create
    expect(planned.code).toBe(3);
    expect(planned.stdout).toMatch(/\+ OrgKey\/billing-own/);
    // the merge request's comment says it, before the merge
    const comment = await runCli(["plan", "-c", billing, "--format", "markdown"], env);
    expect(comment.stdout).toContain(refusal);

    const applied = await apply(billing);
    expect(applied.stdout + applied.stderr).toContain("OWNED_ELSEWHERE");
    const keys = orgKeysOf(sandbox);
    expect(keys.get("acme")?.session.rate).toBe(100);
    expect(keys.get("acme")?.writes).toBe(1);
    expect(keys.get("billing-own")?.session.rate).toBe(5);
  });

  it("validate reads the registry beside the state and refuses the other team's object at its file, naming owner and environment", async () => {
    const validated = await runCli(["validate", path.join(path.dirname(billing), "config"), "-c", billing], env);
    expect(validated.code).toBe(1);
    expect(validated.stdout).toContain(
      `error[OWNED_ELSEWHERE] acme.yaml:1:1: OrgKey/acme (org-key:acme on gateway ${sandbox.urls.gateway.replace(/\/$/, "")}) is owned by team payments (environment default)`,
    );
    expect(validated.stdout.match(/OWNED_ELSEWHERE/g)).toHaveLength(1);
    // the owner's own repository is valid
    expect((await runCli(["validate", path.join(path.dirname(payments), "config"), "-c", payments], env)).code).toBe(0);
  });

  it("lists the registry: one owner per object", async () => {
    const listed = await runCli(["ownership", "list", "-c", billing, "--format", "json"], env);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<{ object: string; owner: string; knownTarget: boolean }>;
    expect(rows.map((r) => [r.object, r.owner, r.knownTarget])).toEqual([
      ["org-key:acme", "payments", true],
      ["org-key:billing-own", "billing", true],
    ]);
  });

  it("transfers management with no call; the new owner's apply writes, the old owner's orphan policy leaves it on", async () => {
    const before = callsOf(sandbox);
    const moved = await runCli(
      [
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
        "billing runs acme now",
        "-c",
        payments,
      ],
      env,
    );
    expect(moved.stderr).toBe("");
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain("nothing was sent");
    expect(callsOf(sandbox)).toBe(before);
    expect(orgKeysOf(sandbox).get("acme")?.session.rate).toBe(100);

    // payments' own repository changing it now is refused
    await writeTeam(dir, "payments", teamConfig("payments", sandbox, { owner: "payments", orphans: "deactivate" }), {
      "acme.yaml": orgKey({ name: "acme", rate: 150, per: 60 }),
    });
    expect((await plan(payments)).stdout).toContain("is owned by team billing (environment default)");

    expect((await apply(billing)).code).toBe(0);
    expect(orgKeysOf(sandbox).get("acme")?.session.rate).toBe(200);

    // payments drops it, under orphans: deactivate: never switched off, it is billing's
    await writeTeam(dir, "payments", teamConfig("payments", sandbox, { owner: "payments", orphans: "deactivate" }), {});
    const calls = callsOf(sandbox);
    const dropped = await apply(payments);
    expect(dropped.stdout + dropped.stderr).toContain("never deactivated here");
    expect(callsOf(sandbox)).toBe(calls);
    expect(orgKeysOf(sandbox).get("acme")?.session.is_inactive).not.toBe(true);
    expect(orgKeysOf(sandbox).get("acme")?.session.rate).toBe(200);
  });

  it("audits the transfer in the history of the environment it was run for", async () => {
    const { SqliteStateBackend } = await import("../../src/record/sqlite/sqlite-backend.js");
    const state = new SqliteStateBackend(path.join(dir, "states", "payments.db"));
    try {
      const rows = await state.readHistory({ kind: "ownership", limit: 10 });
      expect(rows.map((r) => r.record)).toMatchObject([
        { kind: "ownership", act: "transfer", object: "org-key:acme", from: { owner: "payments" }, to: { owner: "billing" }, reason: "billing runs acme now" },
      ]);
    } finally {
      await state.close();
    }
  });

  it("shows a registry row of an unknown target as ignored, skips a malformed one, and plans as before", async () => {
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(path.join(dir, "states", "ownership.db"));
    const insert = db.prepare("INSERT INTO owners VALUES (?, ?, ?, ?, ?, ?, ?)");
    insert.run("gateway", "https://gateway.elsewhere.example", "org-key:billing-own", "payments", "default", "OrgKey/forged", "2026-12-02T00:00:00Z");
    insert.run("gateway", sandbox.urls.gateway.replace(/\/$/, ""), "org-key:broken", "", "default", "OrgKey/broken", "2026-12-02T00:00:00Z");
    db.close();
    const listed = await runCli(["ownership", "list", "-c", billing], env);
    expect(listed.stdout).toContain(
      "org-key:billing-own  gateway https://gateway.elsewhere.example  owner payments (environment default)  claimed by OrgKey/forged",
    );
    expect(listed.stdout).toContain("(a target no environment of this config names: ignored by its runs)");
    expect(listed.stdout).not.toContain("org-key:broken");
    // billing's own key is still its own: the row of another target is not read
    const planned = await plan(billing);
    expect(planned.stdout).not.toContain("OWNED_ELSEWHERE: OrgKey/billing-own");
    expect(planned.code).toBe(0);
  });

  it("refuses an unknown owner name or an object nobody owns on release", async () => {
    const bad = await runCli(
      ["ownership", "transfer", "org-key:acme", "--interface", "gateway", "--to", "Pay Ments", "--to-environment", "x", "--reason", "r", "-c", billing],
      env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--to and --to-environment must be short names");
    const none = await runCli(["ownership", "release", "org-key:nobody", "--interface", "gateway", "--reason", "r", "-c", billing], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("org-key:nobody on gateway");
    expect(none.stderr).toContain("has no owner in the registry");
  });

  it("releases an object: the next owner whose apply declares it claims it", async () => {
    const released = await runCli(["ownership", "release", "org-key:acme", "--interface", "gateway", "--reason", "billing gives acme up", "-c", billing], env);
    expect(released.code).toBe(0);
    await writeTeam(dir, "payments", teamConfig("payments", sandbox, { owner: "payments" }), { "acme.yaml": orgKey({ name: "acme", rate: 300, per: 60 }) });
    expect((await apply(payments)).code).toBe(0);
    expect(orgKeysOf(sandbox).get("acme")?.session.rate).toBe(300);
    const rows = JSON.parse((await runCli(["ownership", "list", "-c", payments, "--format", "json"], env)).stdout) as Array<{ object: string; owner: string }>;
    expect(rows.find((r) => r.object === "org-key:acme")?.owner).toBe("payments");
    // billing, declaring it still, no longer manages it: its no-op says so, a re-assert (an update) is refused
    const json = JSON.parse((await runCli(["plan", "-c", billing, "--format", "json"], env)).stdout) as {
      changes: Array<{ id: string; action: string; ownedBy?: object; notes: string[] }>;
    };
    expect(json.changes.find((c) => c.id === "OrgKey/acme")).toMatchObject({
      action: "no-op",
      ownedBy: { owner: "payments", environment: "default" },
      notes: [expect.stringContaining("is owned by team payments (environment default): not managed here")],
    });
    await writeTeam(dir, "billing", teamConfig("billing", sandbox, { owner: "billing" }), {
      "acme.yaml": orgKey({ name: "acme", rate: 250, per: 60 }),
      "own.yaml": orgKey({ name: "billing-own", rate: 5, per: 60 }),
    });
    expect((await apply(billing)).stdout).toContain("OWNED_ELSEWHERE: OrgKey/acme");
    expect(orgKeysOf(sandbox).get("acme")?.session.rate).toBe(300);
  });
});
