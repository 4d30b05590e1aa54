/**
 * One route table with one token per purpose (docs/user/daemon.md, "Routes and their
 * credentials"), against `gatesync run` as a child process with every token set, the pages'
 * token among them: each route accepts exactly its own credential — checked for every row of
 * the table and, separately, for a list of the routes written out here by hand, so that an edit
 * of the table cannot weaken a route's authentication unnoticed. Promote and rollback work with
 * the promotion token and are refused with the pages' token; a token shared by two purposes is
 * refused at start and at a reload.
 */
import { randomBytes } from "node:crypto";
import { writeFile, readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routeTable } from "../../src/daemon/http/route-table.js";
import type { Credential } from "../../src/daemon/http/credentials.js";
import path from "node:path";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { sandboxTargets, spawnDaemon, stopDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { doc } from "../helpers/plan.js";
import { everyToken, promotedTwice, spawnedPromotionDaemon } from "../helpers/promotion-daemon.js";
import type { SpawnedPromotionDaemon } from "../helpers/promotion-daemon.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import type { Answer } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

type Row = readonly [method: "GET" | "POST", path: string, credential: Credential];

/** Every route of a daemon of named environments and the credential it takes, written out by hand (not read from the table). */
const expectedNamed: readonly Row[] = [
  ["GET", "/healthz", "none"],
  ["GET", "/readyz", "none"],
  ["GET", "/metrics", "none"],
  ["POST", "/hooks/git", "webhook"],
  ["POST", "/sync", "sync"],
  ["GET", "/config", "state"],
  ["GET", "/", "pages"],
  ["GET", "/environments", "pages"],
  ["GET", "/environments/", "pages"],
  ["GET", "/status", "pages"],
  ["GET", "/state", "state"],
  ["GET", "/environments/{env}", "pages"],
  ["GET", "/environments/{env}/", "pages"],
  ["GET", "/environments/{env}/resources", "pages"],
  ["GET", "/environments/{env}/resources/{kind}/{name}", "pages"],
  ["GET", "/environments/{env}/runs", "pages"],
  ["GET", "/environments/{env}/plan", "pages"],
  ["GET", "/environments/{env}/ui/events", "pages"],
  ["GET", "/environments/{env}/ui/app.js", "pages"],
  ["GET", "/environments/{env}/ui/app.css", "pages"],
  ["GET", "/environments/{env}/metrics", "pages"],
  ["GET", "/environments/{env}/status", "pages"],
  ["GET", "/environments/{env}/state", "state"],
  ["GET", "/environments/{env}/ownership", "state"],
  ["POST", "/environments/{env}/sync", "sync"],
  ["POST", "/environments/{env}/promote", "promote"],
  ["POST", "/environments/{env}/freeze", "promote"],
  ["POST", "/environments/{env}/unfreeze", "promote"],
];

/** What each credential is on the wire; `none` sends nothing. */
const presented: Record<Credential, Record<string, string>> = {
  none: {},
  pages: { authorization: `Bearer ${everyToken.pages}` },
  state: { authorization: `Bearer ${everyToken.state}` },
  sync: { authorization: `Bearer ${everyToken.sync}` },
  webhook: { "x-gitlab-token": everyToken.webhook },
  promote: { authorization: `Bearer ${everyToken.promote}` },
};
const credentials = Object.keys(presented) as Credential[];

const repository = { "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10") };
const concrete = (path: string): string => path.replace("{env}", "staging").replace("{kind}/{name}", "OrgKey/acme");

let d: SpawnedPromotionDaemon | undefined;

beforeAll(async () => {
  d = await spawnedPromotionDaemon(repository);
}, 90_000);

afterAll(async () => {
  await d?.stop();
  await removeTempRepos();
});

/** The route's answer to `credential`: a live stream is read up to its head only. */
async function ask(method: string, path: string, credential: Credential, url = d!.url): Promise<Answer> {
  const headers = { ...presented[credential], ...(method === "POST" ? { "content-type": "application/json" } : {}) };
  if (path.endsWith("/ui/events")) {
    const controller = new AbortController();
    const res = await fetch(`${url}${path}`, { headers, signal: controller.signal });
    controller.abort();
    return { status: res.status, headers: {}, text: "", body: undefined };
  }
  return call(`${url}${path}`, { method, headers, ...bodyOf(path) });
}

/** Each route accepts exactly its own credential: every other one (and none) is refused 401; an open route takes anything. */
async function expectOwnCredentialOnly(rows: readonly Row[], url = d!.url): Promise<void> {
  const seen: string[] = [];
  for (const [method, path] of rows) {
    for (const held of credentials) {
      const answer = await ask(method, concrete(path), held, url);
      const accepted = answer.status !== 401;
      const notFound = answer.status === 405 || (answer.status === 404 && (answer.body as { error?: string } | undefined)?.error === "not found");
      seen.push(`${method} ${path} with ${held}: ${accepted && !notFound ? "accepted" : answer.status === 401 ? "refused" : `answered ${answer.status}`}`);
    }
  }
  const expected = rows.flatMap(([method, path, credential]) =>
    credentials.map((held) => `${method} ${path} with ${held}: ${credential === "none" || held === credential ? "accepted" : "refused"}`),
  );
  expect(seen).toEqual(expected);
}

/** A body each operator route refuses before it acts (400), or one it only plans with: the matrix freezes and promotes nothing. */
const bodyOf = (path: string): { body?: Record<string, unknown> } =>
  path.endsWith("/promote") ? { body: { dryRun: true } } : /\/(un)?freeze$/.test(path) ? { body: { until: 1 } } : {};

describe("one route table, one token per purpose", () => {
  it("the table lists exactly the routes written out by hand, each with the credential written there", () => {
    const table = routeTable.map((r) => `${r.method} ${r.path} ${r.credential}`);
    expect([...table].sort()).toEqual(expectedNamed.map((r) => r.join(" ")).sort());
  });

  it("each route of the hand-written list accepts exactly its own credential (pages' token set)", async () => {
    await expectOwnCredentialOnly(expectedNamed);
  }, 120_000);

  it("each route of the table accepts exactly the credential its row names", async () => {
    await expectOwnCredentialOnly(routeTable.map((r) => [r.method, r.path, r.credential] as const));
  }, 120_000);

  it("unknown paths answer 404 and a known path asked with another method 405 with Allow, whatever the token", async () => {
    for (const held of credentials) {
      const unknown = await call(`${d!.url}/no/such/path`, { headers: presented[held] });
      expect([held, unknown.status]).toEqual([held, 404]);
    }
    const wrong = await call(`${d!.url}/environments/production/promote`, { headers: presented.promote });
    expect([wrong.status, wrong.headers.allow]).toEqual([405, "POST"]);
    const page = await call(`${d!.url}/environments/staging/runs`, { method: "POST", headers: presented.pages });
    expect([page.status, page.headers.allow]).toEqual([405, "GET, HEAD"]);
  });

  it("with the pages' token set, promote and rollback work with the promotion token and are refused with the pages' token", async () => {
    const spawned = d!;
    await spawned.sync();
    const dry = await eventually(
      () => spawned.promote({ dryRun: true }),
      (a) => a.status === 200,
      30_000,
    );
    expect(dry.body).toMatchObject({ environment: "production", dryRun: true });
    expect((await spawned.promote({}, everyToken.pages)).status).toBe(401);
    expect((await spawned.promote({})).status).toBe(202);
    await eventually(
      () => spawned.production.inspect.store.orgKeys.get("org-acme")?.session.rate,
      (rate) => rate === 10,
    );
    await promotedTwice(spawned, { "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 20") });
    await eventually(
      () => spawned.production.inspect.store.orgKeys.get("org-acme")?.session.rate,
      (rate) => rate === 20,
    );
    const refused = await spawned.promote({ rollback: { steps: 1 } }, everyToken.pages);
    expect([refused.status, refused.headers["www-authenticate"]]).toEqual([401, undefined]);
    expect((await spawned.promote({ rollback: { steps: 1 } })).status).toBe(202);
    await eventually(
      () => spawned.production.inspect.store.orgKeys.get("org-acme")?.session.rate,
      (rate) => rate === 10,
    );
  }, 120_000);

  it("a reload that makes two purposes share a token is refused, located, and the config in force keeps serving", async () => {
    const spawned = d!;
    const before = await readFile(spawned.operatorFile, "utf8");
    await writeFile(spawned.operatorFile, before.replace("promoteTokenEnv: PROMOTE_TOKEN", "promoteTokenEnv: PAGES_TOKEN"));
    const status = await eventually(
      () => call(`${spawned.url}/status`, { headers: presented.pages }),
      (a) => (a.body as { config?: { error?: unknown } }).config?.error !== undefined,
      20_000,
    );
    const diagnostics = (status.body as { config: { error: { diagnostics: Array<Record<string, string>> } } }).config.error.diagnostics;
    expect(diagnostics).toMatchObject([{ code: "CONFIG_TOKEN_SHARED", path: "server.promoteTokenEnv" }]);
    expect(diagnostics[0]!.message).toContain("server.pagesTokenEnv and server.promoteTokenEnv both name PAGES_TOKEN");
    expect(JSON.stringify(status.body)).not.toContain(everyToken.pages);
    // the old config is in force: the pages' token still cannot promote, the promotion token still can
    expect((await spawned.promote({ dryRun: true }, everyToken.pages)).status).toBe(401);
    expect((await spawned.promote({ dryRun: true })).status).not.toBe(401);
    // the hint followed (another variable, of its own value: the one it named before): the refusal is gone
    expect(diagnostics[0]!.hint).toContain("name another variable in server.promoteTokenEnv");
    await writeFile(spawned.operatorFile, before);
    await eventually(
      () => call(`${spawned.url}/status`, { headers: presented.pages }),
      (a) => (a.body as { config?: { error?: unknown } }).config?.error === undefined,
      20_000,
    );
  }, 60_000);
});

describe("a token shared by two purposes at start", () => {
  it("is refused before the daemon serves, naming the two settings and never the value", async () => {
    const err = await spawnedPromotionDaemon(repository, { PROMOTE_TOKEN: everyToken.sync }).then(
      async (started) => (await started.stop(), undefined),
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain("CONFIG_TOKEN_SHARED");
    expect(err?.message).toContain("server.syncTokenEnv and server.promoteTokenEnv");
    expect(err?.message).not.toContain(everyToken.sync);
    // the hint followed: PROMOTE_TOKEN given a value of its own, the daemon serves, and promotes with that value only
    expect(err?.message).toContain("give PROMOTE_TOKEN a value of its own");
    const own = randomBytes(32).toString("hex");
    const started = await spawnedPromotionDaemon(repository, { PROMOTE_TOKEN: own });
    try {
      expect((await started.promote({ dryRun: true }, own)).status).not.toBe(401);
      expect((await started.promote({ dryRun: true }, everyToken.sync)).status).toBe(401);
    } finally {
      await started.stop();
    }
  }, 90_000);
});

/** A daemon of the implicit environment (no `environments:`): its root paths, each with the `/environments/default/…` it stands for, and the credential, by hand. */
const expectedImplicit: ReadonlyArray<readonly [root: string, canonical: string, credential: Credential]> = [
  ["/", "/environments/default/", "pages"],
  ["/resources", "/environments/default/resources", "pages"],
  ["/resources/OrgKey/acme", "/environments/default/resources/OrgKey/acme", "pages"],
  ["/runs", "/environments/default/runs", "pages"],
  ["/runs/", "/environments/default/runs/", "pages"],
  ["/plan", "/environments/default/plan", "pages"],
  ["/ui/app.js", "/environments/default/ui/app.js", "pages"],
  ["/status", "/environments/default/status", "pages"],
  ["/state", "/environments/default/state", "state"],
  ["/ownership", "/environments/default/ownership", "state"],
];

describe("the implicit environment's root paths", () => {
  let implicit: DaemonProcess | undefined;
  let sandbox: SandboxHandle | undefined;

  afterAll(async () => {
    await stopDaemon(implicit);
    await sandbox?.stop();
  });

  it("are aliases of /environments/default/…, each taking exactly its own credential", async () => {
    sandbox = await testSandbox();
    const dir = await tempRepo({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10") });
    await writeFile(
      path.join(dir, "gatesync.yaml"),
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
${sandboxTargets(sandbox)}state: { backend: sqlite, path: ./state.db }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", pagesTokenEnv: PAGES_TOKEN, stateTokenEnv: STATE_TOKEN, syncTokenEnv: SYNC_TOKEN }
`,
    );
    implicit = await spawnDaemon(path.join(dir, "gatesync.yaml"), dir, {
      PAGES_TOKEN: everyToken.pages,
      STATE_TOKEN: everyToken.state,
      SYNC_TOKEN: everyToken.sync,
    });
    const url = implicit.url;
    await eventually(
      () => call(`${url}/status`, presentedAs("pages")),
      (a) => (a.body as { lastRun?: unknown }).lastRun !== null,
      60_000,
    );
    const rows = expectedImplicit.flatMap(([root, canonical, credential]) => [["GET", root, credential] as const, ["GET", canonical, credential] as const]);
    await expectOwnCredentialOnly([...rows, ["POST", "/environments/default/sync", "sync"], ["POST", "/sync", "sync"]], url);
    for (const [root, canonical, credential] of expectedImplicit) {
      const [a, b] = [await call(`${url}${root}`, presentedAs(credential)), await call(`${url}${canonical}`, presentedAs(credential))];
      expect([root, b.status, b.headers["content-type"]]).toEqual([root, a.status, a.headers["content-type"]]);
      // the same answer, not a second handler's: the state, and the implicit environment's /status
      if (root === "/state" || root === "/status") expect([root, b.body]).toEqual([root, a.body]);
    }
    // the root of named environments is not this daemon's
    expect((await call(`${url}/environments`, presentedAs("pages"))).status).toBe(404);
    expect((await call(`${url}/environments/production/status`, presentedAs("pages"))).status).toBe(404);
  }, 120_000);
});

const presentedAs = (credential: Credential): { headers: Record<string, string> } => ({ headers: presented[credential] });
