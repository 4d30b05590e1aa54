/**
 * The history a daemon keeps in its state, met as a user meets it: real `gatesync run`
 * processes over a real git repository and the sandbox. With SQLite, a restarted daemon still
 * lists the runs before the restart, with the commit's author and subject, and `gatesync
 * history` prints them; with PostgreSQL, a standby's /status, page and metrics describe the
 * leader's last run and commit, and after the leader dies the one that takes over still lists
 * the runs it made.
 */
import { writeFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { gitRemote } from "../helpers/git-remote.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { spawnReplica } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { eventually } from "../helpers/eventually.js";

let sandbox: SandboxHandle;
let dir: string;
let work: string;
let head: string;
const replicas: Replica[] = [];
const author = "Ada Lovelace";
const subject = "raise the acme rate to 10";

const dump = (): string => replicas.map((r) => `--- ${r.name}\n${r.log.slice(-2500)}`).join("\n");

/** A read that throws counts as its error (a replica not up yet), and the error ends with dump(). */
const until = <T>(read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 30_000): Promise<T> =>
  eventually(
    () =>
      Promise.resolve()
        .then(read)
        .catch((err: unknown) => err as T),
    ok,
    ms,
    () => `\n${dump()}`,
  );

interface LastRun {
  readonly result: string;
  readonly commit?: string;
  readonly author?: string;
  readonly subject?: string;
  readonly replica: string;
}
interface Status {
  readonly role: string;
  readonly synced: boolean;
  readonly commit: string | null;
  readonly lastRun: LastRun | null;
}
const status = async (r: Replica): Promise<Status> => (await call(`${r.url}/status`)).body as Status;

async function start(name: string, state: string): Promise<Replica> {
  const config = path.join(dir, `${name}.yaml`);
  await writeFile(
    config,
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source:
  git: { url: ${path.join(dir, "origin.git")}, branch: main, subdirectory: config, cacheDir: ./cache-${name} }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
  portal: { url: ${sandbox.urls.portal}, credentialEnv: PORTAL_KEY }
state: ${state}
schedule: { interval: 1s }
server: { listen: "127.0.0.1:0" }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
  );
  const r = spawnReplica(name, config, dir, {
    GATESYNC_LOG_LEVEL: "info",
    GW_KEY: testCredentials.gatewayKey,
    PORTAL_KEY: testCredentials.portalKey,
    DATABASE_URL: pgUrl,
  });
  replicas.push(r);
  await until(
    () => r.url,
    (u) => u !== undefined,
  );
  return r;
}

async function stop(r: Replica, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  const closed = new Promise((resolve) => r.child.once("close", resolve));
  r.child.kill(signal);
  await closed;
}

beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo();
  work = gitRemote(dir);
  execFileSync("mkdir", ["-p", path.join(work, "config")]);
  await writeFile(path.join(work, "config/keys.yaml"), doc("OrgKey", "acme", "keyId: org-acme\nrate: 10"));
  const git = (...args: string[]): string =>
    execFileSync("git", ["-c", `user.name=${author}`, "-c", "user.email=ada@example.com", ...args], { cwd: work, encoding: "utf8" }).trim();
  git("add", "-A");
  git("commit", "-qm", `${subject}\n\nThe body is not the subject.`);
  git("push", "-q", "origin", "HEAD:main");
  head = git("rev-parse", "HEAD");
}, 60_000);

afterAll(async () => {
  for (const r of replicas) await stop(r, "SIGKILL");
  await sandbox.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

describe("the history in a SQLite state", () => {
  it("survives a restart: the runs before it are listed, with the commit's author and subject, and `gatesync history` prints them", async () => {
    const state = "{ backend: sqlite, path: ./sqlite-state.db }";
    const first = await start("first", state);
    const before = await until(
      () => status(first),
      (s) => s.lastRun?.result === "applied",
    );
    expect(before.lastRun).toMatchObject({ commit: head, author, subject });
    await stop(first);
    const again = await start("again", state);
    // before its own first run ends, the restarted daemon already names the last run and the commit in force
    const after = await until(
      () => status(again),
      (s) => s.lastRun !== null,
    );
    expect(after.commit).toBe(head);
    expect(after.lastRun).toMatchObject({ commit: head, author, subject });
    const page = (await call(`${again.url}/runs`)).text;
    expect(page).toContain(subject);
    expect(page).toContain(`by ${author}`);
    await stop(again);

    const config = path.join(dir, "again.yaml");
    const text = await runCli(["history", "--config", config]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^#1 \\S+ applied +start · ${head.slice(0, 12)} · 1 applied, 0 failed`, "m"));
    expect(text.stdout).toContain(`    ${subject} — ${author}`);
    const json = await runCli(["history", "--config", config, "--format", "json", "--limit", "50"]);
    const runs = (
      JSON.parse(json.stdout) as {
        runs: Array<{ seq: number; outcome: string; author?: string; subject?: string; replica: string; counts: { applied: number } }>;
      }
    ).runs;
    const oldest = runs.at(-1)!;
    expect(oldest).toMatchObject({ seq: 1, outcome: "applied", author, subject, counts: { applied: 1 } });
    // the run before the restart was the first process's, the later ones the second's
    expect(oldest.replica).toContain(String(first.child.pid));
    expect(runs[0]!.replica).toContain(String(again.child.pid));
  }, 120_000);
});

describe("the history in a PostgreSQL state shared by replicas", () => {
  it("a standby shows the leader's last run and commit, on /status, its page and its metrics; after a failover the runs are still listed", async () => {
    const state = `{ backend: postgres, urlEnv: DATABASE_URL, schema: ${testSchema()} }`;
    const a = await start("a", state);
    await until(
      () => status(a),
      (s) => s.role === "leader" && s.lastRun?.result === "applied",
    );
    const b = await start("b", state);
    const standby = await until(
      () => status(b),
      (s) => s.role === "standby" && s.lastRun !== null && s.synced,
    );
    expect(standby.commit).toBe(head);
    expect(standby.lastRun).toMatchObject({ commit: head, author, subject });
    expect(standby.lastRun!.replica).toContain(String(a.child.pid));
    expect((await call(`${b.url}/runs`)).text).toContain(subject);
    const metrics = (await call(`${b.url}/metrics`)).text;
    expect(metrics).toMatch(/^gatesync_synced 1$/m);
    expect(metrics).toMatch(/^gatesync_leader 0$/m);
    const age = Number(/^gatesync_last_success_age_seconds (\S+)$/m.exec(metrics)?.[1]);
    expect(age).toBeLessThan(60);

    await stop(a, "SIGKILL");
    const led = await until(
      () => status(b),
      (s) => s.role === "leader" && s.lastRun?.replica.includes(String(b.child.pid)) === true,
      60_000,
    );
    expect(led.commit).toBe(head);
    const runs = (await call(`${b.url}/runs`)).text;
    expect(runs).toMatch(new RegExp(`on [^<]*:${a.child.pid}<`));
  }, 120_000);
});

describe("the history of a fleet's environments", () => {
  it("a replica that does not lead an environment shows that environment's leader's last run, synced, on its /status and metrics", async () => {
    const schema = testSchema();
    const second = await testSandbox();
    const fleetDir = await tempRepo({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme-fleet\nrate: 10") });
    const target = (box: SandboxHandle): string => `{ gateway: { url: ${box.urls.gateway}, credentialEnv: GW_KEY } }`;
    await writeFile(
      path.join(fleetDir, "gatesync.yaml"),
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY }
environments:
  east: { targets: ${target(sandbox)} }
  west: { targets: ${target(second)} }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }
schedule: { interval: 500ms, jitter: 0 }
server: { listen: "127.0.0.1:0" }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
    );
    const env = { GATESYNC_LOG_LEVEL: "info", GW_KEY: testCredentials.gatewayKey, DATABASE_URL: pgUrl };
    const fleet = [
      spawnReplica("f1", path.join(fleetDir, "gatesync.yaml"), fleetDir, env),
      spawnReplica("f2", path.join(fleetDir, "gatesync.yaml"), fleetDir, env),
    ];
    replicas.push(...fleet);
    try {
      type Fleet = { fleet: { replica: string; leads: string[] } };
      type Environment = Status & { environment: string; leader: string | null };
      const leaders = await until(
        async () => Promise.all(fleet.map(async (r) => ((await call(`${r.url}/status`)).body as Fleet).fleet)),
        (fs) =>
          Array.isArray(fs) &&
          fs
            .flatMap((f) => f.leads)
            .sort()
            .join() === "east,west",
        60_000,
      );
      const names = leaders.map((f) => f.replica);
      // the leader as the lease table read at the standby's last renewal says (within one renewal of the take), and its run
      const standbyShows = (s: Environment): boolean =>
        s.role === "standby" && s.lastRun !== null && s.synced && s.leader !== null && s.lastRun.replica === s.leader;
      for (const name of ["east", "west"]) {
        // which replica stands by is asked each time: the fleet may hand an environment over to spread them
        const statuses = await until(
          async () => Promise.all(fleet.map(async (r) => (await call(`${r.url}/environments/${name}/status`)).body as Environment)),
          (ss) => ss.some(standbyShows),
          60_000,
        );
        const standby = statuses.findIndex(standbyShows);
        const seen = statuses[standby]!;
        expect(seen.leader).toBe(names[1 - standby]);
        expect(["applied", "noop"]).toContain(seen.lastRun?.result);
        expect((await call(`${fleet[standby]!.url}/metrics`)).text).toMatch(new RegExp(`^gatesync_synced\\{environment="${name}"\\} 1$`, "m"));
      }
    } finally {
      for (const r of fleet) await stop(r, "SIGKILL");
      await second.stop();
      for (const name of ["east", "west"]) await sql(`DROP SCHEMA IF EXISTS ${schema}_${name} CASCADE`);
    }
  }, 150_000);
});
