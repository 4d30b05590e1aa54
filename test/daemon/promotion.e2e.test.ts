/**
 * Promotion end to end (docs/user/promotion.md): a daemon over a real git repository and two
 * sandboxes, production promoted from staging with a 1 s soak in staging. A merge reaches staging
 * only; once its checks passed and it soaked, a promotion applies it to production; a revision
 * still soaking, and one whose post-apply check fails in staging, are refused with that reason;
 * the dry run shows the plan against production's state and applies nothing; the promotion route
 * refuses the sync and state tokens and no token. With `promotion: auto`, production takes each
 * verified revision by itself.
 */
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { acmeKey, acmeRate, promotionDaemon, stateToken, syncToken, untilAcmeRate } from "../helpers/promotion-daemon.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";
import { runCli } from "../helpers/cli.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

const api = (expectStatus: number): Record<string, string> => ({
  "config/api.yaml": `${doc(
    "ApiDefinition",
    "petstore",
    `apiId: petstore-v1\ndefinition:\n  openapi: 3.0.3\n  info: { title: petstore, version: "1" }\n  servers: [{ url: "http://up.internal:8080" }]\n  paths:\n    /pets:\n      get:\n        responses:\n          "200": { description: ok, content: { application/json: { example: [] } } }`,
  )}  query: { listenPath: /petstore/, mockResponse: true }\n  verify:\n    - path: pets\n      expectStatus: ${expectStatus}\n`,
});

const errorOf = (body: unknown): string => (body as { error?: string }).error ?? "";

let manual: PromotionDaemon | undefined;
let auto: PromotionDaemon | undefined;

afterAll(async () => {
  await manual?.stop();
  await auto?.stop();
  await removeTempRepos();
});

describe("promotion from staging to production", () => {
  it("a merge reaches staging only; after its checks and soak a promotion applies it to production", async () => {
    manual = await promotionDaemon(acmeKey(10));
    const d = manual;
    await untilAcmeRate(d, "staging", 10);
    // nothing is promoted yet: production applies nothing, and its runs wait — they are not failures
    expect(acmeRate(d, "production")).toBeUndefined();
    const waiting = await d.daemon.environments.get("production")!.runOnce("test");
    expect(waiting).toMatchObject({ result: "waiting" });
    expect(waiting.error).toContain("nothing promoted to production yet");
    // staging verifies its revision at the end of its soak, by itself
    const dry = await eventually(
      () => d.promote({ dryRun: true }),
      (a) => a.status === 200,
    );
    expect(dry.body).toMatchObject({ environment: "production", from: "staging", dryRun: true, changes: 1 });
    expect((dry.body as { plan: string }).plan).toContain("OrgKey/acme");
    expect(acmeRate(d, "production")).toBeUndefined();
    const first = (dry.body as { revision: string }).revision;
    const promoted = await d.promote({ revision: first.slice(0, 10) });
    expect(promoted.status).toBe(202);
    expect(promoted.body).toMatchObject({ revision: first, dryRun: false });
    await untilAcmeRate(d, "production", 10);

    const second = await d.push(acmeKey(20), "raise acme's rate");
    await d.sync();
    await untilAcmeRate(d, "staging", 20);
    const soaking = await d.promote({ revision: second });
    expect(soaking.status).toBe(409);
    expect(errorOf(soaking.body)).toMatch(
      new RegExp(`production cannot take ${second.slice(0, 12)}: ${second.slice(0, 12)} (is soaking in staging|ended its soak)`),
    );
    // a merge reaches staging only
    expect(acmeRate(d, "production")).toBe(10);
    await eventually(
      () => d.promote({ revision: second }),
      (a) => a.status === 202,
    );
    await untilAcmeRate(d, "production", 20);
  });

  it("refuses a revision whose post-apply check failed in staging, naming the check", async () => {
    const d = manual!;
    const failing = await d.push(api(404), "petstore with a check that fails");
    await d.sync();
    await eventually(
      () => d.daemon.environments.get("staging")?.lastRun,
      (r) => r?.commit === failing && r.result !== undefined,
    );
    const refused = await eventually(
      () => d.promote({ revision: failing }),
      (a) => a.status === 409 && errorOf(a.body).includes("failed"),
    );
    expect(errorOf(refused.body)).toBe(
      `production cannot take ${failing.slice(0, 12)}: ${failing.slice(0, 12)} failed in staging: post-apply check failed: ApiDefinition/petstore: GET pets: expected 404, got 200; answer: [{"relative_url":"pets","code":200,"headers":{"Content-Type":["application/json"],"Content-Length":["2"]},"body":"[]"}]`,
    );
    expect(d.production.inspect.calls().log.some((c) => c.path.includes("petstore"))).toBe(false);
  });

  it("refuses the sync token, the state token and no token; without a revision it names the newest candidate", async () => {
    const d = manual!;
    for (const token of [syncToken, stateToken, null]) {
      const answer = await d.promote({}, token);
      expect(answer.status).toBe(401);
      expect(errorOf(answer.body)).toBe("invalid or missing promotion token");
    }
    const staging = await d.promote({ dryRun: true }, undefined, "staging");
    expect(staging.status).toBe(409);
    expect(errorOf(staging.body)).toBe("staging is not promoted from another environment");
    expect((await d.promote({ revision: "not a sha" })).status).toBe(409);
  });
});

describe("rollback", () => {
  it("--steps 1 puts production's previous values back, says it first, and production stays there; the run after has nothing to do", async () => {
    const d = manual!;
    const dry = await d.promote({ rollback: { steps: 1 }, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ environment: "production", from: "production", rollback: true, changes: 1, cannotUndo: [] });
    expect(acmeRate(d, "production")).toBe(20);
    const back = await d.promote({ rollback: { steps: 1 } });
    expect(back.status).toBe(202);
    await untilAcmeRate(d, "production", 10);
    const production = d.daemon.environments.get("production")!;
    await eventually(
      () => production.lastRun,
      (r) => r?.reason === "rollback" && r.result === "applied",
    );
    expect((await production.runOnce("test")).result).toBe("noop");
    expect(acmeRate(d, "production")).toBe(10);
    // a revision production never applied is not a rollback target
    const refused = await d.promote({ rollback: {}, revision: "0123456789abcdef0123456789abcdef01234567" });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "PROMOTION_NOT_EARLIER" });
    expect(errorOf(refused.body)).toContain("production never applied 0123456789ab");
    // the status page says where production stands and what to run
    const page = (await call(`${d.daemon.url}/environments/production/`)).text;
    expect(page).toContain("Promotion from staging");
    expect(page).toMatch(
      /<code>[0-9a-f]{10}<\/code> rolled back to .* \(rollback with PROMOTE_TOKEN\) <span class="warn">stays until the next promotion<\/span>/,
    );
    expect(page).toContain("promotion: manual (a person runs gatesync promote)");
    // back on its first revision, production has nowhere further back to go: no rollback offered
    expect(page).not.toContain("gatesync rollback production");
    expect((await call(`${d.daemon.url}/environments/staging/`)).text).not.toContain("Promotion from");
    // gatesync history lists them from the state, with the runs
    const history = await runCli(["history", "-c", d.operatorFile, "--env", "production"], d.env);
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(
      /Promotions and verifications:\n {2}#\d+ \S+ rolled back to [0-9a-f]{12} from production \(rollback with PROMOTE_TOKEN\) {2}← in force\n {2}#\d+ \S+ promoted [0-9a-f]{12} from staging \(promote with PROMOTE_TOKEN\)\n/,
    );
    expect(history.stdout).toMatch(/verified [0-9a-f]{12} after a soak of 0 ms/);
  });
});

describe("promotion: auto", () => {
  it("promotes each verified revision by itself", async () => {
    auto = await promotionDaemon(acmeKey(30), "auto");
    const d = auto;
    await untilAcmeRate(d, "production", 30);
    await d.push(acmeKey(40), "raise acme's rate again");
    await d.sync();
    await untilAcmeRate(d, "staging", 40);
    await untilAcmeRate(d, "production", 40);
  });
});
