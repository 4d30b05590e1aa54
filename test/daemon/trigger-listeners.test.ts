/**
 * Triggers inside one schedule interval (webhooks, file changes) each end the wait for the
 * next run: the wait they end must leave nothing behind on the daemon-lifetime signal. Each
 * once left a pending sleep with an abort listener there until the interval ended —
 * MaxListenersExceededWarning after 11 webhooks.
 */
import { getEventListeners } from "node:events";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent } from "undici";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/run/run-report.js";
import { DaemonMetrics } from "../../src/daemon/metrics/metrics.js";
import { Reconciler } from "../../src/daemon/loop/reconciler.js";
import { silentLogger } from "../../src/logger.js";
import { LocalSource } from "../../src/source/local-source.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
const dispatcher = new Agent();
let h: Harness | undefined;
let reconciler: Reconciler | undefined;
afterEach(async () => {
  await reconciler?.stop();
  await h?.stop();
});
afterAll(async () => dispatcher.close());

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("triggers inside one schedule interval", () => {
  it("50 triggers leave no extra listener on the daemon's signal, no pending sleep and no warning", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k") } });
    const config = await h.config();
    const runs: RunReport[] = [];
    reconciler = new Reconciler({
      config: { ...config, schedule: { ...config.schedule, intervalMs: 3_600_000 } },
      configHash: "c1",
      source: new LocalSource(path.join(h.dir, "config")),
      state: h.state,
      validator: new RepositoryValidator(),
      env: h.env,
      logger: silentLogger(),
      dispatcher,
      metrics: new DaemonMetrics(),
      onRun: (r) => runs.push(r),
    });
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      reconciler.start();
      const waitFor = async (n: number): Promise<void> => {
        for (let i = 0; i < 400 && (runs.length < n || reconciler!.nextRunAt === undefined); i++) await sleep(10);
      };
      await waitFor(1);
      const daemonSignal = (reconciler as unknown as { abort: AbortController }).abort.signal;
      const listenersBefore = getEventListeners(daemonSignal, "abort").length;
      const timersBefore = timers();
      for (let i = 0; i < 50; i++) {
        reconciler.trigger("webhook");
        await waitFor(i + 2);
      }
      expect(runs.length).toBe(51);
      expect(runs.slice(1).every((r) => r.reason === "webhook")).toBe(true);
      expect(getEventListeners(daemonSignal, "abort").length).toBe(listenersBefore);
      expect(timers()).toBeLessThanOrEqual(timersBefore);
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
