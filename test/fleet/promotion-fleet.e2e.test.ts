/**
 * Promotion in a fleet (docs/user/promotion.md, docs/user/fleets.md): two replicas of `gatesync
 * run` (real processes) on one PostgreSQL database, a real git repository, staging and production
 * (promoted from staging) led by different replicas, one sandbox each. A commit reaches staging
 * only; a promotion sent to the replica that does not lead production is accepted and production's
 * leader applies it, once (counted at production's sandbox) — the promotion is a row in the shared
 * state, not a message; a revision staging did not verify is refused with the same reason by
 * either replica; both replicas' pages and `gatesync history` show the promotion.
 */
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { pushFiles } from "../helpers/git-remote.js";
import { doc } from "../helpers/plan.js";
import {
  fleetEnv as env,
  fleetHoldings,
  fleetStatus as status,
  key,
  keyWrites,
  promoteToken,
  rateIn,
  startPromotionFleet,
} from "../helpers/promotion-fleet.js";
import type { HistoryJson } from "../helpers/promotion-fleet.js";
import { untilWithLogs } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { call } from "../helpers/sandbox.js";
import type { Answer } from "../helpers/sandbox.js";

const { replicas, sandboxes, envSchemas, cleanUp } = fleetHoldings();
afterAll(cleanUp);

const until = untilWithLogs(replicas);

/** An API whose post-apply check expects 404 from a mock that answers 200: it fails in staging. */
const failingApi = (): Record<string, string> => ({
  "config/api.yaml": `${doc(
    "ApiDefinition",
    "petstore",
    `apiId: petstore-v1\ndefinition:\n  openapi: 3.0.3\n  info: { title: petstore, version: "1" }\n  servers: [{ url: "http://up.internal:8080" }]\n  paths:\n    /pets:\n      get:\n        responses:\n          "200": { description: ok, content: { application/json: { example: [] } } }`,
  )}  query: { listenPath: /petstore/, mockResponse: true }\n  verify:\n    - path: pets\n      expectStatus: 404\n`,
});

const promote = (r: Replica, body: object): Promise<Answer> =>
  call(`${r.url}/environments/production/promote`, {
    method: "POST",
    headers: { authorization: `Bearer ${promoteToken}`, "content-type": "application/json" },
    body,
  });
const errorOf = (a: Answer): string => (a.body as { error?: string }).error ?? "";

describe("promotion in a fleet whose replicas lead staging and production apart", () => {
  let staging: SandboxHandle;
  let production: SandboxHandle;
  let dir: string;
  let work: string;
  let a: Replica;
  let b: Replica;
  /** The replica that leads production, and the one that does not (it leads staging). */
  let leader: Replica;
  let other: Replica;
  let first: string;

  const push = (files: Record<string, string>, message: string): Promise<string> => pushFiles(work, files, message);

  it("a commit reaches staging only; a promotion sent to the replica that does not lead production is applied there once, by its leader", async () => {
    ({ staging, production, dir, work, a, b, leader, other } = await startPromotionFleet(
      { promotion: "manual", interval: "1s" },
      { replicas, sandboxes, envSchemas },
    ));
    expect((await status(other)).fleet.leads).toEqual(["staging"]);

    await until(
      () => rateIn(staging),
      (r) => r === 10,
      30_000,
      "for staging's first apply",
    );
    // staging verifies its revision at the end of its soak; the replica that does not lead production sees it
    const dry = await until(
      () => promote(other, { dryRun: true }),
      (x) => x.status === 200,
      30_000,
      "for a candidate",
    );
    expect(dry.body).toMatchObject({ environment: "production", from: "staging", dryRun: true, changes: 1 });
    first = (dry.body as { revision: string }).revision;
    expect(rateIn(production)).toBeUndefined();
    expect(keyWrites(production)).toBe(0);

    const promoted = await promote(other, { revision: first });
    expect(promoted.status).toBe(202);
    expect(promoted.body).toMatchObject({ environment: "production", revision: first, from: "staging", dryRun: false });
    await until(
      () => rateIn(production),
      (r) => r === 10,
      30_000,
      "for production's leader to apply the promotion",
    );
    await sleep(3_000); // several loop intervals on both replicas
    expect(keyWrites(production)).toBe(1);
    // production was led by the same replica all along, and the run that applied it was that replica's
    expect((await status(leader)).fleet.leads).toEqual(["production"]);
    const json = await runCli(["history", "-c", path.join(dir, "a.yaml"), "--env", "production", "--format", "json"], env());
    expect(json.code, json.stderr).toBe(0);
    const history = JSON.parse(json.stdout) as HistoryJson;
    const applied = history.runs.filter((r) => r.outcome === "applied");
    expect(applied.map((r) => r.commit)).toEqual([first]);
    expect(applied[0]!.replica).toContain(String(leader.child.pid));
    expect(history.promotions).toMatchObject([{ revision: first, from: "staging", rollback: false, actor: { by: "token" } }]);

    // a second commit reaches staging, not production
    await push(key(20), "acme at 20");
    await until(
      () => rateIn(staging),
      (r) => r === 20,
      30_000,
      "for staging to apply the second commit",
    );
    await sleep(2_000);
    expect(rateIn(production)).toBe(10);
    expect(keyWrites(production)).toBe(1);
  }, 180_000);

  it("refuses a revision staging did not verify with the same reason on either replica, and production takes nothing", async () => {
    const failing = await push(failingApi(), "petstore with a check that fails");
    // the refusal says which check failed and what the batch route answered (the same on either replica)
    const reason = `production cannot take ${failing.slice(0, 12)}: ${failing.slice(0, 12)} failed in staging: post-apply check failed: ApiDefinition/petstore: GET pets: expected 404, got 200; answer: [{"relative_url":"pets","code":200,"headers":{"Content-Type":["application/json"],"Content-Length":["2"]},"body":"[]"}]`;
    const refused = await until(
      () => promote(other, { revision: failing }),
      (x) => x.status === 409 && errorOf(x).includes("failed in staging"),
      60_000,
      "for the check to fail in staging",
    );
    expect(errorOf(refused)).toBe(reason);
    const atLeader = await promote(leader, { revision: failing });
    expect([atLeader.status, errorOf(atLeader)]).toEqual([409, reason]);
    await sleep(2_000);
    expect(production.inspect.calls().log.some((c) => c.path.includes("petstore"))).toBe(false);
    expect(rateIn(production)).toBe(10);
  }, 90_000);

  it("shows the promotion on both replicas' pages and in `gatesync history` with either replica's settings", async () => {
    for (const r of [a, b]) {
      const page = (await call(`${r.url}/environments/production/`)).text;
      expect(page, r.name).toContain("Promotion from staging");
      expect(page, r.name).toMatch(new RegExp(`<code>${first.slice(0, 10)}</code> promoted .* \\(promote with PROMOTE_TOKEN\\)`));
    }
    for (const name of ["a", "b"]) {
      const text = await runCli(["history", "-c", path.join(dir, `${name}.yaml`), "--env", "production"], env());
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`promoted ${first.slice(0, 12)} from staging \\(promote with PROMOTE_TOKEN\\)`));
    }
  }, 30_000);
});
