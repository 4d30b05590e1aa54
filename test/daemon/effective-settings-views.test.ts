/**
 * One set of effective settings in every view (issue 55): a daemon of two environments follows
 * a real bare git repository; `rate: ${var:rate}` is in a resource and each environment's value
 * under `environments.NAME.values` of the repository's gatesync.yaml (the operator's file,
 * outside the repository, has none for production and a left-over 99 for staging). The daemon
 * applies the repository's values; the next-plan page, the resources page, each resource's page
 * and `gatesync plan`/`validate -c <the daemon's file>` (real processes) say the same: nothing
 * to do, the commit valid. Then a commit whose gatesync.yaml keeps operator settings for local
 * runs, `track:` among them: applied, each setting said once as a note whose hint, followed,
 * leaves the repository valid.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { withoutPath } from "../../src/config/settings-owners.js";
import { spawnCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { acmeRate } from "../helpers/promotion-daemon.js";
import { call, testCredentials } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { twoEnvironments } from "../helpers/two-environments.js";
import type { TwoEnvironments } from "../helpers/two-environments.js";

let setup: TwoEnvironments;

const teamSettings = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
environments:
  staging:
    values: { rate: 10 }
  production:
    values: { rate: 20 }
`;
const keys = doc("OrgKey", "acme", "keyId: org-acme\nrate: ${var:rate}");

beforeAll(async () => {
  setup = await twoEnvironments({ "config/keys.yaml": keys, "gatesync.yaml": teamSettings });
  expect((await setup.daemon.firstRun).result).toBe("applied");
}, 60_000);

afterAll(async () => {
  await setup?.stop();
  await removeTempRepos();
});

const page = async (p: string): Promise<string> => (await call(`${setup.daemon.url}${p}`)).text;
/** A one-shot command with the daemon's own file, off CI: what an operator runs beside the daemon. */
const withDaemonFile = (...args: string[]): ReturnType<typeof spawnCli> =>
  spawnCli([...args, "-c", setup.operatorFile], { cwd: path.dirname(setup.operatorFile), env: { NO_COLOR: "1", CI: "", GW_KEY: testCredentials.gatewayKey } });

describe("the views and commands of a daemon's commit", () => {
  it("the daemon applies the repository's value of each environment", () => {
    expect([acmeRate(setup, "staging"), acmeRate(setup, "production")]).toEqual([10, 20]);
  });

  it("the next-plan page of each environment plans nothing: the commit validates with its team settings", async () => {
    for (const env of ["staging", "production"]) {
      const text = await page(`/environments/${env}/plan`);
      expect(text, env).not.toContain("does not validate");
      expect(text, env).not.toContain("VALUE_MISSING");
      expect(text, env).toContain("Nothing to do: the servers match the repository");
    }
  });

  it("the resources page and a resource's page say no commit is refused", async () => {
    for (const env of ["staging", "production"]) {
      const list = await page(`/environments/${env}/resources`);
      expect(list, env).toContain("OrgKey/acme");
      expect(list, env).not.toContain("is refused");
      const one = await page(`/environments/${env}/resources/OrgKey/acme`);
      expect(one, env).toContain("OrgKey/acme");
      expect(one, env).not.toContain("is refused");
      expect(one, env).not.toContain("VALUE_MISSING");
    }
  });

  it("gatesync plan, validate and apply -c <the daemon's file> agree with the daemon's run", async () => {
    const validate = await withDaemonFile("validate");
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).not.toContain("VALUE_MISSING");
    for (const env of ["staging", "production"]) {
      const plan = await withDaemonFile("plan", "--env", env, "--detailed-exitcode");
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain("No changes");
    }
    // and apply of the daemon's file applies what the daemon applied: nothing left to do
    const apply = await withDaemonFile("apply", "--env", "production", "--auto-approve");
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout + apply.stderr).not.toContain("VALUE_MISSING");
    expect(acmeRate(setup, "production")).toBe(20);
  }, 120_000);
});

describe("operator settings a repository's gatesync.yaml keeps for local runs", () => {
  // a developer's file, valid for local runs: it follows the same remote, and applies to a local sandbox
  const local = (): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(setup.origin)}, branch: main, subdirectory: config } }
targets: { gateway: { url: "http://127.0.0.1:8081", credentialEnv: GW_KEY } }
orphans: deactivate
environments:
  staging:
    values: { rate: 11 }
  production:
    track: { branch: main }
    values: { rate: 20 }
`;
  interface Note {
    readonly severity: string;
    readonly path: string;
    readonly hint: string;
  }
  const notesOn = async (env: string): Promise<Note[]> => {
    const body = (await call(`${setup.daemon.url}/status`)).body as { environments: Array<{ environment: string; lastRun: { ignoredSettings?: Note[] } }> };
    return body.environments.find((e) => e.environment === env)?.lastRun.ignoredSettings ?? [];
  };

  it("a team-only file that mentions `track:` is applied: the setting is ignored, said as a note", async () => {
    const tracked = teamSettings.replace("    values: { rate: 10 }", "    track: { tag: v* }\n    values: { rate: 9 }");
    await setup.syncTo(await setup.push({ "gatesync.yaml": tracked }, "staging: track (the operator's) and rate 9"));
    expect(setup.daemon.environments.get("staging")?.lastRun?.result).toBe("applied");
    expect(acmeRate(setup, "staging")).toBe(9);
    const note = (await notesOn("staging")).find((n) => n.path === "environments.staging.track.tag");
    expect(note?.severity).toBe("info");
    expect(note?.hint).toContain("remove `environments.staging.track` from gatesync.yaml");
  }, 60_000);

  it("are ignored, `track:` too: the commit applies, and each is a note whose hint keeps the repository valid", async () => {
    await setup.syncTo(await setup.push({ "gatesync.yaml": local() }, "local settings kept in the repository's file"));
    expect(setup.daemon.environments.get("production")?.lastRun?.result).not.toBe("invalid");
    expect(acmeRate(setup, "staging")).toBe(11);
    const notes = await notesOn("production");
    expect(notes.map((n) => n.path).sort()).toEqual([
      "environments.production.track.branch",
      "orphans",
      "targets.gateway.credentialEnv",
      "targets.gateway.url",
    ]);
    expect(notes.every((n) => n.severity === "info")).toBe(true);
    // a local run needs its target: the hint keeps it (the same source as the daemon's is not said at all); the others may go
    expect(notes.find((n) => n.path === "targets.gateway.url")?.hint).toMatch(/^keep it/);
    expect(notes.find((n) => n.path === "environments.production.track.branch")?.hint).toContain("remove `environments.production.track` from gatesync.yaml");
    // the hints followed: what they say to remove, removed; the repository's file still validates
    let followed = parse(local()) as Record<string, unknown>;
    const removed = notes.flatMap((n) => /^if it was meant for the daemon, remove `([^`]+)`/.exec(n.hint)?.[1] ?? []);
    expect(removed).toContain("orphans");
    for (const section of removed) followed = withoutPath(followed, section.split("."));
    const file = path.join(setup.work, "gatesync.yaml");
    await writeFile(file, stringify(followed));
    const validate = await spawnCli(["validate", "-c", file], { cwd: setup.work, env: { NO_COLOR: "1", CI: "" } });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(await readFile(file, "utf8")).not.toMatch(/orphans|track/);
    await setup.syncTo(await setup.push({}, "the hints followed"));
    expect(setup.daemon.environments.get("production")?.lastRun?.result).not.toBe("invalid");
    // what is left is what local runs need, each said with a hint to keep it
    const left = await notesOn("production");
    expect(left.map((n) => n.path).sort()).toEqual(["targets.gateway.credentialEnv", "targets.gateway.url"]);
    expect(left.every((n) => n.hint.startsWith("keep it"))).toBe(true);
  }, 120_000);
});
