/**
 * Faults: the sandbox answers 20% of calls 500, resets some connections, rate-limits with
 * 429 + Retry-After and adds random latency. Repeated applies of the examples converge:
 * every idempotent change applied, every create applied once or reported in doubt (never sent
 * twice) and, once resolved, applied; no call reaches a paused interface before its
 * Retry-After; each run's summary counts match the sandbox's call log.
 */
import path from "node:path";
import { Agent } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { statusCounts } from "../../src/apply/summary.js";
import type { InterfaceName } from "../../src/kinds/kind.js";
import { interfaceOf } from "../../src/sandbox/sandbox.js";
import { harness } from "../helpers/apply.js";
import { recordCalls } from "../helpers/call-recorder.js";
import { runCli } from "../helpers/cli.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** The interface a client-side path belongs to, as the sandbox routes it (batch calls are the gateway's). */
const interfaceOfCall = (p: string): InterfaceName => interfaceOf(new URL(p, "http://x").pathname) ?? "gateway";

const rounds = Number(process.env.GATESYNC_FAULT_ROUNDS ?? 4);

describe("applying under faults", () => {
  it.each(Array.from({ length: rounds }, (_, i) => i + 1))(
    "converges, creates nothing twice, honours Retry-After and counts every call (seed %i)",
    async (seed) => {
      const h = await harness({
        ownCredentials: true,
        rate: "{ concurrency: 4, requestsPerSecond: 40 }",
        sandbox: { seed, faults: { errorRate: 0.2, resetRate: 0.05, rateLimit: { requestsPerSecond: 6, burst: 2 }, latencyMs: 2, jitterMs: 25 } },
      });
      const agent = new Agent({ keepAliveTimeout: 10_000 });
      const client = recordCalls(agent);
      try {
        const injected = { inDoubt: 0, runs: 0 };
        let converged = false;
        for (let run = 0; run < 12 && !converged; run++) {
          const before = h.sandbox.inspect.calls().log.length;
          const { summary, run: planned } = await h.apply({ dispatcher: client.dispatcher });
          injected.runs++;
          // the records by status the daemon reports, derived without reading the state again
          const recorded = { applied: 0, failed: 0, "in-doubt": 0 };
          for (const r of (await h.state.read()).resources.values()) recorded[r.status] += 1;
          expect(statusCounts(planned.state, summary), `records by status after run ${run}`).toEqual(recorded);
          const log = h.sandbox.inspect
            .calls()
            .log.slice(before)
            .filter((c) => !c.internal && c.interface !== "traffic");
          // the summary counts every call the sandbox saw, per interface
          for (const iface of ["gateway", "portal", "dashboard", "llm"] as InterfaceName[]) {
            // a gateway's requests: its direct calls, the batch calls and the checks' batch calls
            const sent = iface === "gateway" ? summary.calls.gateway + summary.calls.batchCalls + summary.calls.checks : summary.calls[iface];
            expect(sent, `${iface} calls in run ${run}`).toBe(log.filter((c) => c.interface === iface).length);
          }
          // on the client's own timeline: no call started while its interface was paused by a 429's
          // Retry-After (1 s here); the 5 ms allow for the answer's body to be read and judged
          expect(client.calls.filter((c) => c.status === 429 || c.status === 503).length, `throttled answers seen by the client in run ${run}`).toBe(
            log.filter((c) => c.status === 429 || c.status === 503).length,
          );
          for (const t of client.calls.filter((c) => c.status === 429 && c.answeredAt !== undefined)) {
            const pauseMs = Number(t.retryAfter) * 1000;
            const early = client.calls.filter(
              (c) => interfaceOfCall(c.path) === interfaceOfCall(t.path) && c.sentAt > t.answeredAt! + 5 && c.sentAt < t.answeredAt! + pauseMs,
            );
            expect(
              early.map((c) => `${c.method} ${c.path} ${Math.round(c.sentAt - t.answeredAt!)}ms`),
              `calls during the pause after ${t.path}`,
            ).toEqual([]);
          }
          client.calls.length = 0;
          // nothing created twice, ever
          const s = h.sandbox.inspect.store;
          expect(s.products.size).toBeLessThanOrEqual(2);
          expect(s.portalWebhooks.size).toBeLessThanOrEqual(2);
          expect(s.llmSettings.size).toBeLessThanOrEqual(2);
          expect(s.dashboardHooks.length).toBeLessThanOrEqual(2);
          expect(s.orgKeys.get("acme")?.quotaResets ?? 0).toBeLessThanOrEqual(1);
          converged = summary.failed.length === 0 && summary.inDoubt.length === 0;
          // resolve in-doubt creates the way an operator would: look at the server
          for (const d of summary.inDoubt) {
            injected.inDoubt++;
            // a dashboard webhook settles itself: the next apply sends it again (409: it exists)
            if (d.id.startsWith("DashboardWebhook/")) continue;
            const record = (await h.state.read()).resources.get(d.id)!;
            const attempted = record.attempted?.read() as Record<string, unknown>;
            let id: string | undefined;
            if (record.kind === "ApiProduct") id = [...s.products.values()].find((p) => p.Name === attempted.Name)?.ID as string | undefined;
            if (record.kind === "PortalWebhook") id = [...s.portalWebhooks.values()].find((w) => w.Name === attempted.Name)?.ID as string | undefined;
            if (record.kind === "LlmSettings")
              id = [...s.llmSettings.values()].find(
                (l) => (l.attributes as Record<string, unknown>).model_name === (attempted.attributes as Record<string, unknown>).model_name,
              )?.id as string | undefined;
            const args =
              record.kind === "OrgKey"
                ? (s.orgKeys.get("acme")?.quotaResets ?? 0) > 0
                  ? ["--accept"]
                  : ["--forget"]
                : id === undefined
                  ? ["--forget"]
                  : ["--id", String(id)];
            expect((await runCli(["state", "resolve", d.id, ...args, "--config", path.join(h.dir, "gatesync.yaml")], h.env)).code).toBe(0);
          }
        }
        expect(converged).toBe(true);
        const s = h.sandbox.inspect.store;
        expect([s.products.size, s.portalWebhooks.size, s.dashboardHooks.length, s.llmSettings.size]).toEqual([2, 2, 2, 2]);
        expect(s.orgKeys.get("acme")?.quotaResets).toBe(1);
        expect((await h.plan()).changes.filter((c) => c.action !== "no-op")).toEqual([]);
        const faults = h.sandbox.inspect.faults().injected;
        expect(faults.error + faults.reset + faults.throttled).toBeGreaterThan(0);
        process.stdout.write(`faults seed ${seed}: ${JSON.stringify({ ...injected, injected: faults })}\n`);
      } finally {
        await h.stop();
        await agent.close();
      }
    },
    120_000,
  );
});
