/**
 * A throttled apply in a real `gatesync apply` process: a 429 with Retry-After pauses the
 * interface, and the pause must keep the process alive until the work is done. The pause's
 * timer was unreferenced: with nothing else holding the event loop, Node exited with code 13
 * ("unsettled top-level await") mid-apply — no summary, the rest never sent, the creates
 * refused with 429 (certainly not created) left in doubt.
 */
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { spawnCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const products = (n: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}.yaml`, doc("ApiProduct", `p${i}`, `Name: P${i}\nProviderID: 1`)]));

describe("a throttled apply in a real process", () => {
  it("waits out 429 + Retry-After: 1 and finishes: every create applied once, none in doubt, exit 0", async () => {
    h = await harness({ files: products(5), sandbox: { faults: { rateLimit: { requestsPerSecond: 1, burst: 1 }, interfaces: ["portal"] } } });
    const r = await spawnCli(["apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"], {
      env: { ...h.env, GATESYNC_LOG_LEVEL: "silent" },
    });
    expect(h.sandbox.inspect.faults().injected.throttled).toBeGreaterThan(0);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Apply: 5 applied, 0 failed, 0 in doubt");
    expect(h.sandbox.inspect.store.products.size).toBe(5);
    const state = await h.state.read();
    expect([...state.resources.values()].map((rec) => rec.status)).toEqual(Array(5).fill("applied"));
  }, 60_000);

  it("past retries.maxRetryAfterMs fails the throttled creates as not sent — never in doubt — and the next run applies them", async () => {
    h = await harness({ files: products(3), sandbox: { faults: { rateLimit: { requestsPerSecond: 0.2, burst: 1 }, interfaces: ["portal"] } } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const { readFile, writeFile } = await import("node:fs/promises");
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace("retries: { max: 4,", "retries: { maxRetryAfterMs: 2000, max: 4,"));
    const r = await spawnCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], { env: { ...h.env, GATESYNC_LOG_LEVEL: "silent" } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/Apply: 1 applied, 2 failed, 0 in doubt/);
    expect(r.stdout).toContain("longer than retries.maxRetryAfterMs");
    expect(h.sandbox.inspect.store.products.size).toBe(1);
    const state = await h.state.read();
    expect([...state.resources.values()].filter((rec) => rec.status === "in-doubt")).toEqual([]);
    h.sandbox.inspect.setFaults({ rateLimit: undefined });
    const next = await spawnCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], { env: { ...h.env, GATESYNC_LOG_LEVEL: "silent" } });
    expect(next.code).toBe(0);
    expect(next.stdout).toContain("Apply: 2 applied, 0 failed, 0 in doubt");
    expect(h.sandbox.inspect.store.products.size).toBe(3);
  }, 60_000);
});
