/**
 * No server can hang an apply, exhaust its memory or make it send a non-repeatable request
 * twice. A misbehaving proxy (test/helpers/misbehaving-proxy.ts) sits between gatesync and
 * the sandbox: each test states the bound the apply must end within, checks what the summary
 * says of every resource, and counts what reached the sandbox.
 */
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { CallEvent } from "../../src/apply/types.js";
import type { Harness } from "../helpers/apply.js";
import { throughProxy } from "../helpers/apply.js";
import type { MisbehavingProxy, Rule } from "../helpers/misbehaving-proxy.js";
import { cliArgs } from "../helpers/cli.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { doc, orgKey, product } from "../helpers/resources.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
let proxy: MisbehavingProxy | undefined;
afterEach(async () => {
  await proxy?.stop();
  await h?.stop();
  h = proxy = undefined;
});

const clientType = doc("ClientType", "web", "providerId: 1\nclientTypeId: 10\nName: Web\nResponseTypes: code\nGrantType: pkce");

const timed = async <T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const t0 = performance.now();
  const value = await f();
  return { value, ms: performance.now() - t0 };
};

describe("a Retry-After over the cap", () => {
  it("fails the interface's remaining calls as throttled (not sent, not in doubt) and ends the apply", async () => {
    const files = { ...Object.fromEntries(["a", "b", "c"].map((n) => [`${n}.yaml`, product({ name: n })])), "k.yaml": orgKey({ name: "k1", rate: 5 }) };
    ({ h, proxy } = await throughProxy(
      "portal",
      [{ method: "POST", path: /\/products$/, then: { kind: "answer", status: 429, headers: { "retry-after": "86400" }, body: '{"errors":["slow down"]}' } }],
      { files, batch: false, rate: "{ concurrency: 1, requestsPerSecond: 1000 }" },
      (y) => y.replace("timeoutMs: 5000", "timeoutMs: 5000, maxRetryAfterMs: 2000"),
    ));
    const { value, ms } = await timed(() => h!.apply());
    const { summary } = value;
    expect(ms, "the apply ends at once instead of waiting a day").toBeLessThan(10_000);
    process.stdout.write(`Retry-After 86400 over a 2 s cap: apply ${Math.round(ms)} ms\n`);
    expect(summary.applied).toEqual(["OrgKey/k1"]);
    expect(summary.inDoubt).toEqual([]);
    expect(summary.failed.map((f) => f.id)).toEqual(["ApiProduct/a", "ApiProduct/b", "ApiProduct/c"]);
    for (const f of summary.failed)
      expect(f.message).toMatch(/asked to wait 86400 s \(Retry-After\), longer than retries\.maxRetryAfterMs \(2 s\): not sent; the next run tries again/);
    // one call met the 429; the others were never sent
    expect(proxy.calls.filter((c) => c.path.endsWith("/products"))).toHaveLength(1);
    expect(h.sandbox.inspect.store.products.size).toBe(0);
    const state = await h.state.read();
    for (const id of ["ApiProduct/a", "ApiProduct/b", "ApiProduct/c"]) expect(state.resources.get(id)?.status).toBe("failed");
    // the next run tries again: the plan still creates them
    expect((await h.plan()).changes.filter((c) => c.action === "create")).toHaveLength(3);
  });
});

describe("SIGTERM during a pause", () => {
  it("ends the daemon within its graceful window while an interface waits out a Retry-After", async () => {
    const files = { "a.yaml": product({ name: "a" }), "b.yaml": product({ name: "b" }) };
    ({ h, proxy } = await throughProxy(
      "portal",
      [{ method: "POST", path: /\/products$/, then: { kind: "answer", status: 429, headers: { "retry-after": "120" }, body: '{"errors":["slow down"]}' } }],
      { files, batch: false, rate: "{ concurrency: 1, requestsPerSecond: 1000 }" },
    ));
    const daemon = spawn(process.execPath, cliArgs("run", "--config", path.join(h.dir, "gatesync.yaml"), "--listen", "127.0.0.1:0"), {
      cwd: h.dir,
      env: { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    daemon.stderr.on("data", (b: Buffer) => (output += b.toString()));
    daemon.stdout.on("data", (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number | null>((resolve) => daemon.once("exit", (code) => resolve(code)));
    try {
      for (let i = 0; i < 200 && !/interface paused by Retry-After/.test(output); i++) await new Promise((r) => setTimeout(r, 100));
      expect(output).toMatch(/interface paused by Retry-After/);
      const t0 = performance.now();
      daemon.kill("SIGTERM");
      const code = await exited;
      // the pause had two minutes to go; the graceful window is 15 s
      expect(performance.now() - t0, output).toBeLessThan(10_000);
      process.stdout.write(`SIGTERM during a 120 s Retry-After pause: exit after ${Math.round(performance.now() - t0)} ms\n`);
      expect(code).toBe(0);
      expect(proxy.calls.filter((c) => c.path.endsWith("/products"))).toHaveLength(1);
      expect(h.sandbox.inspect.store.products.size).toBe(0);
      // the create that met the 429 failed (it was not processed); the other was never started
      const state = await h.state.read();
      expect([...state.resources.values()].map((r) => r.status).filter((s) => s !== "failed")).toEqual([]);
    } finally {
      if (daemon.exitCode === null) daemon.kill("SIGKILL");
    }
  }, 40_000);
});

describe("one deadline per call", () => {
  it("ends a call whose answer drips one byte every 2 s: a create in doubt (sent once), an update retried then failed", async () => {
    const drip: Rule["then"] = { kind: "drip", everyMs: 2000 };
    ({ h, proxy } = await throughProxy(
      "portal",
      [{ path: /\/products$|\/client-types\//, then: drip }],
      { files: { "p.yaml": product({ name: "shop" }), "c.yaml": clientType }, batch: false },
      (y) => y.replace("retries: { max: 4,", "retries: { max: 1,").replace("timeoutMs: 5000", "timeoutMs: 1000"),
    ));
    const { value, ms } = await timed(() => h!.apply());
    const { summary } = value;
    // two tries of at most 1 s each for the update, one for the create, plus backoff: far below the drip's 2 s per byte
    expect(ms).toBeLessThan(12_000);
    process.stdout.write(`dripping answers (1 byte / 2 s, timeoutMs 1000, 3 calls): apply ${Math.round(ms)} ms\n`);
    expect(summary.inDoubt).toEqual([
      {
        id: "ApiProduct/shop",
        message: expect.stringMatching(
          /no complete answer within retries\.timeoutMs \(1000 ms\) \(status 201 arrived; its body did not\): outcome unknown/,
        ) as string,
      },
    ]);
    expect(summary.failed).toEqual([
      { id: "ClientType/web", message: expect.stringMatching(/no complete answer within retries\.timeoutMs .*outcome unknown after 2 tries/) as string },
    ]);
    expect(proxy.calls.filter((c) => c.method === "POST" && c.path.endsWith("/products"))).toHaveLength(1);
    expect(h.sandbox.inspect.store.products.size).toBe(1);
    expect(proxy.calls.filter((c) => c.path.includes("/client-types/"))).toHaveLength(2);
  }, 20_000);
});

describe("limits.maxResponseBytes", () => {
  it("stops reading a 300 MB answer at the limit: outcome unknown, said so, memory bounded", async () => {
    const huge: Rule["then"] = { kind: "huge", bytes: 300 * 1024 * 1024 };
    ({ h, proxy } = await throughProxy(
      "portal",
      [{ path: /\/products$|\/client-types\//, then: huge }],
      { files: { "p.yaml": product({ name: "shop" }), "c.yaml": clientType }, batch: false },
      (y) => y.replace("retries: { max: 4,", "retries: { max: 1,"),
    ));
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const { value, ms } = await timed(() => h!.apply());
    clearInterval(sampler);
    const { summary } = value;
    expect(ms).toBeLessThan(20_000);
    expect(summary.inDoubt).toEqual([
      {
        id: "ApiProduct/shop",
        message: expect.stringMatching(
          /the answer \(status 201\) is larger than limits\.maxResponseBytes \(4 MiB\): reading stopped; outcome unknown/,
        ) as string,
      },
    ]);
    expect(summary.failed).toEqual([
      { id: "ClientType/web", message: expect.stringMatching(/larger than limits\.maxResponseBytes .*outcome unknown after 2 tries/) as string },
    ]);
    expect(h.sandbox.inspect.store.products.size).toBe(1);
    // the client hung up long before the 900 MB the three answers offered, and held little of it
    expect(proxy.written.bytes).toBeLessThan(100 * 1024 * 1024);
    expect(peak - before, `RSS grew by ${Math.round((peak - before) / 1024 / 1024)} MB`).toBeLessThan(120 * 1024 * 1024);
    process.stdout.write(
      `huge answers: apply ${Math.round(ms)} ms, RSS +${Math.round((peak - before) / 1024 / 1024)} MB, ${Math.round(proxy.written.bytes / 1024 / 1024)} MB written of 900 MB offered\n`,
    );
  }, 40_000);
});

describe("an oversized answer and the state", () => {
  it("a 3 MiB 2xx that parses (under the response limit) is recorded capped: the state grows by less than 1 MB and stays readable", async () => {
    ({ h, proxy } = await throughProxy("portal", [{ method: "POST", path: /\/products$/, then: { kind: "bloat", bytes: 3 * 1024 * 1024 } }], {
      files: { "p.yaml": product({ name: "shop" }), "q.yaml": product({ name: "shop2" }) },
      batch: false,
    }));
    const files = ["state.db", "state.db-wal"].map((f) => path.join(h!.dir, "state", f));
    const size = async (): Promise<number> =>
      (
        await Promise.all(
          files.map((f) =>
            stat(f).then(
              (s) => s.size,
              () => 0,
            ),
          ),
        )
      ).reduce((a, b) => a + b, 0);
    await h.state.read();
    const before = await size();
    const { summary } = await h.apply();
    expect([...summary.applied].sort()).toEqual(["ApiProduct/shop", "ApiProduct/shop2"]);
    expect(proxy.written.bytes).toBeGreaterThan(6 * 1024 * 1024);
    const grown = (await size()) - before;
    expect(grown, `the state grew by ${grown} bytes`).toBeLessThan(1024 * 1024);
    const record = (await h.state.read()).resources.get("ApiProduct/shop");
    expect(record?.status).toBe("applied");
    expect(record?.serverId).toMatch(/\S/);
    expect(JSON.stringify(record?.response).length).toBeLessThan(17 * 1024);
    expect(record?.response?.read()).toMatchObject({ truncated: true });
    process.stdout.write(`oversized answers: 2 x 3 MiB answered, state grew by ${Math.round(grown / 1024)} KiB\n`);
  }, 40_000);
});

describe("batch outcomes", () => {
  it("takes a 2xx that is not the list of results as 'outcome unknown': the quota reset in doubt and never sent again, nothing sent directly", async () => {
    const files = {
      "r.yaml": orgKey({ name: "reset", rate: 5, spec: 'quota_max: 10\nquota_renewal_rate: 60\nquotaResetTrigger: "2026-11"' }),
      "a.yaml": orgKey({ name: "a", rate: 5 }),
      "b.yaml": orgKey({ name: "b", rate: 5 }),
    };
    ({ h, proxy } = await throughProxy("gateway", [{ method: "POST", path: /\/gw\/batch\/?$/, then: { kind: "garbage" } }], { files }, (y) =>
      y.replace("retries: { max: 4,", "retries: { max: 2,"),
    ));
    const { value, ms } = await timed(() => h!.apply());
    const { summary } = value;
    expect(ms).toBeLessThan(10_000);
    expect(summary.inDoubt).toEqual([
      { id: "OrgKey/reset", message: expect.stringMatching(/answered 200 without the list of results .*every sub-request's outcome is unknown/) as string },
    ]);
    expect(summary.failed.map((f) => [f.id, /outcome unknown after 3 tries/.test(f.message)])).toEqual([
      ["OrgKey/a", true],
      ["OrgKey/b", true],
    ]);
    expect(summary.batchFallback).toBeUndefined();
    // the batch that carried the reset was processed once; the retries carried only the idempotent writes
    expect(h.sandbox.inspect.store.orgKeys.get("reset")?.quotaResets).toBe(1);
    expect(proxy.calls.filter((c) => c.path.startsWith("/gw/org/keys"))).toEqual([]);
  });
});

describe("adaptive rate", () => {
  it("halves an interface's rate on a 429 without Retry-After and grows it back step by step", async () => {
    const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}.yaml`, orgKey({ name: `k${i}`, rate: 5 })]));
    const busy: Rule = { path: /\/gw\/org\/keys\//, times: 2, then: { kind: "answer", status: 429, body: '{"status":"error","message":"busy"}' } };
    ({ h, proxy } = await throughProxy("gateway", [busy], { files, batch: false, rate: "{ concurrency: 1, requestsPerSecond: 40 }" }));
    const events: CallEvent[] = [];
    const { summary } = await h.apply({ observe: (e) => events.push(e) });
    expect(summary.applied).toHaveLength(8);
    expect(summary.calls.retries).toBe(2);
    // two halvings, then a tenth of the configured rate back per answered call, capped
    expect(events.map((e) => [e.code, e.rate])).toEqual([
      ["429", 20],
      ["429", 10],
      ["200", 14],
      ["200", 18],
      ["200", 22],
      ["200", 26],
      ["200", 30],
      ["200", 34],
      ["200", 38],
      ["200", 40],
    ]);
  });
});
