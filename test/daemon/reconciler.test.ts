import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent } from "undici";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { GatesyncConfig } from "../../src/config/config.js";
import { DaemonMetrics } from "../../src/daemon/metrics/metrics.js";
import { Reconciler } from "../../src/daemon/loop/reconciler.js";
import type { RunReport } from "../../src/run/run-report.js";
import { ReplayGuard, safeEqual, verifyWebhook } from "../../src/daemon/http/webhook.js";
import { silentLogger } from "../../src/logger.js";
import { GitSource } from "../../src/source/git-source.js";
import { LocalSource } from "../../src/source/local-source.js";
import type { Source } from "../../src/source/source.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
let reconciler: Reconciler | undefined;
const dispatcher = new Agent();
afterEach(async () => {
  await reconciler?.stop();
  reconciler = undefined;
  await h?.stop();
  h = undefined;
});
afterAll(async () => dispatcher.close());

function build(config: GatesyncConfig, source: Source, extra: { onRun?: (r: RunReport) => void } = {}): Reconciler {
  return new Reconciler({
    config,
    configHash: "c1",
    source,
    state: h!.state,
    validator: new RepositoryValidator(),
    env: h!.env,
    logger: silentLogger(),
    dispatcher,
    metrics: new DaemonMetrics(),
    retryBaseMs: 50,
    random: () => 0.5,
    ...(extra.onRun === undefined ? {} : { onRun: extra.onRun }),
  });
}

describe("reconciler", () => {
  it("re-asserts idempotent resources when due, undoing a change made outside git", async () => {
    h = await harness({
      files: {
        "c.yaml": doc(
          "OAuthClient",
          "app",
          "apiId: petstore-v1\nclientId: petstore-mobile-app\nredirect_uri: https://git.example.com/cb\npolicy_id: mobile-default",
        ),
      },
    });
    const base = await h.config();
    const config = { ...base, schedule: { ...base.schedule, reassertIntervalMs: 1 } };
    reconciler = build(config, new LocalSource(path.join(h.dir, "config")));
    expect((await reconciler.runOnce("start")).result).toBe("applied");
    h.sandbox.inspect.store.oauthClients.get("petstore-v1\0petstore-mobile-app")!.redirect_uri = "https://changed-by-hand";
    await sleep(5);
    const report = await reconciler.runOnce("schedule");
    expect(report.result).toBe("applied");
    expect(report.summary?.applied).toEqual(["OAuthClient/app"]);
    expect(h.sandbox.inspect.store.oauthClients.get("petstore-v1\0petstore-mobile-app")!.redirect_uri).toBe("https://git.example.com/cb");
  });

  it("without re-assert, makes no call at all when nothing changed", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k") } });
    reconciler = build(await h.config(), new LocalSource(path.join(h.dir, "config")));
    await reconciler.runOnce("start");
    const calls = h.sandbox.inspect.calls().log.length;
    expect((await reconciler.runOnce("schedule")).result).toBe("noop");
    expect(h.sandbox.inspect.calls().log.length).toBe(calls);
  });

  it("keeps going when one resource fails, retries it on the next run, sooner, with backoff", async () => {
    h = await harness({
      files: {
        "k.yaml": doc("OrgKey", "k", "keyId: k"),
        "c.yaml": doc("OAuthClient", "bad", "apiId: petstore-v1\nclientId: petstore-mobile-app\npolicy_id: missing-policy"),
      },
    });
    const config = await h.config();
    reconciler = build({ ...config, schedule: { ...config.schedule, intervalMs: 60_000 } }, new LocalSource(path.join(h.dir, "config")));
    const first = await reconciler.runOnce("start");
    expect(first.result).toBe("partial");
    expect(first.summary?.applied).toEqual(["OrgKey/k"]);
    expect(first.summary?.failed.map((f) => f.id)).toEqual(["OAuthClient/bad"]);
    expect((reconciler as unknown as { nextDelay(): number }).nextDelay()).toBe(50);
    const second = await reconciler.runOnce("schedule");
    expect(second.result).toBe("partial"); // retried, not skipped
    expect((reconciler as unknown as { nextDelay(): number }).nextDelay()).toBe(100);
    h.sandbox.inspect.store.policies.set("missing-policy", "all");
    expect((await reconciler.runOnce("schedule")).result).toBe("applied");
    expect((reconciler as unknown as { nextDelay(): number }).nextDelay()).toBe(60_000);
  });

  it("stops starting calls at once when interrupted (lost leadership), recording what was done", async () => {
    const files = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}.yaml`, doc("ApiProduct", `p${i}`, `Name: p${i}\nProviderID: 1`)]));
    h = await harness({ files, rate: "{ concurrency: 1, requestsPerSecond: 1000 }", sandbox: { faults: { latencyMs: 100, interfaces: ["portal"] } } });
    reconciler = build(await h.config(), new LocalSource(path.join(h.dir, "config")));
    const run = reconciler.runOnce("start");
    await sleep(250);
    reconciler.interrupt();
    const report = await run;
    expect(report.result).toBe("partial");
    const created = h.sandbox.inspect.store.products.size;
    expect(created).toBeGreaterThan(0);
    expect(created).toBeLessThan(10);
    expect(report.summary?.applied.length).toBe(created);
    expect(report.summary?.skipped.length).toBe(10 - created);
    expect((await h.state.read()).resources.size).toBe(created);
  });

  it("keeps the last good commit applied while the remote is unreachable", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k") } });
    const local = build(await h.config(), new LocalSource(path.join(h.dir, "config")));
    await local.runOnce("start");
    const good = local.lastGood;
    await local.stop();
    reconciler = build(
      await h.config(),
      new GitSource({ url: "http://127.0.0.1:9/unreachable.git", branch: "main", cacheDir: path.join(h.dir, "cache"), timeoutMs: 5000 }),
    );
    reconciler.lastGood = good;
    const report = await reconciler.runOnce("schedule");
    expect(report.result).toBe("source-error");
    expect(report.error).toMatch(/cannot fetch git http:\/\/127\.0\.0\.1:9\/unreachable\.git/);
    expect(reconciler.lastGood).toEqual(good);
    expect((reconciler as unknown as { nextDelay(): number }).nextDelay()).toBe(50);
  });

  it("follows a watched directory, an editor's atomic save included", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 1") } });
    const config = await h.config();
    const runs: RunReport[] = [];
    reconciler = build(
      { ...config, schedule: { ...config.schedule, intervalMs: 3_600_000 } },
      new LocalSource(path.join(h.dir, "config"), { debounceMs: 100, watch: true }),
      { onRun: (r) => runs.push(r) },
    );
    reconciler.start();
    for (let i = 0; i < 100 && runs.length === 0; i++) await sleep(50);
    await sleep(300);
    // write a temp file and rename it over the original, as editors do
    await mkdir(path.join(h.dir, "tmp"), { recursive: true });
    await writeFile(path.join(h.dir, "tmp/k.yaml"), doc("OrgKey", "k", "keyId: k\nrate: 42"));
    await rename(path.join(h.dir, "tmp/k.yaml"), path.join(h.dir, "config/k.yaml"));
    // the run report comes once the apply is recorded, after the sandbox has the change
    for (let i = 0; i < 100 && !runs.some((r) => r.reason === "file change" && r.result === "applied"); i++) await sleep(50);
    expect(h.sandbox.inspect.store.orgKeys.get("k")?.session.rate).toBe(42);
    // the call lands before its run has recorded it and finished
    for (let i = 0; i < 100 && !runs.some((r) => r.reason === "file change"); i++) await sleep(50);
    expect(runs.some((r) => r.reason === "file change" && r.result === "applied")).toBe(true);
  });
});

describe("webhook verification", () => {
  it("compares in constant time and checks GitHub and GitLab signatures", () => {
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abd")).toBe(false);
    expect(safeEqual("abc", "abcd")).toBe(false);
    const body = Buffer.from('{"ref":"refs/heads/main"}');
    const good = "sha256=5e1d3b8c1ea1ca5e2f9d6a1d1d4fdfb8e3c4c3d6b5f0d2f5a0b7b0f1e2d3c4b5";
    expect(verifyWebhook({ "x-hub-signature-256": good }, body, "s")).toEqual({ ok: false, reason: "bad signature" });
    expect(verifyWebhook({ "x-gitlab-token": "s", "x-gitlab-event-uuid": "u" }, body, "s")).toEqual({ ok: true, delivery: "u", provider: "gitlab" });
    expect(verifyWebhook({}, body, "s")).toEqual({ ok: false, reason: "no signature" });
  });

  it("refuses a delivery id seen before, remembering a bounded number", () => {
    const guard = new ReplayGuard(2);
    expect(guard.accept("a")).toBe(true);
    expect(guard.accept("a")).toBe(false);
    expect(guard.accept("b")).toBe(true);
    expect(guard.accept("c")).toBe(true);
    expect(guard.accept("a")).toBe(true); // forgotten
  });
});
