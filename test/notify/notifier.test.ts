/** The notifier and its deliveries against local receivers: events, leadership, retries, bounds. */
import { Agent } from "undici";
import { Registry } from "prom-client";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/run/run-report.js";
import { silentLogger } from "../../src/logger.js";
import type { NotificationsConfig } from "../../src/config/notifications.js";
import { defaultDelivery } from "../../src/config/notifications.js";
import { eventsOfRun, finalStatus } from "../../src/notify/events.js";
import { Notifier } from "../../src/notify/notifier.js";
import { registerSecret, redactor } from "../../src/secrets/redaction.js";
import type { Receiver } from "../helpers/receiver.js";
import { startReceiver } from "../helpers/receiver.js";
import { eventually } from "../helpers/eventually.js";

const dispatcher = new Agent();
const receivers: Receiver[] = [];
let notifier: Notifier | undefined;
afterEach(async () => {
  await notifier?.close(100);
  notifier = undefined;
  for (const r of receivers.splice(0)) await r.stop();
});
afterAll(async () => {
  redactor.clear();
  await dispatcher.close();
});

const report = (r: Partial<RunReport>): RunReport => ({ reason: "sync", startedAt: "t0", finishedAt: "t1", durationMs: 5, result: "applied", ...r });
const summary = (failed: string[], inDoubt: string[]): NonNullable<RunReport["summary"]> =>
  ({
    applied: [],
    failed: failed.map((id) => ({ id, message: "refused" })),
    inDoubt: inDoubt.map((id) => ({ id, message: "no answer" })),
  }) as unknown as NonNullable<RunReport["summary"]>;

function make(config: Partial<NotificationsConfig> & Pick<NotificationsConfig, "receivers">, registry = new Registry()): Notifier {
  notifier = new Notifier({
    config: { delivery: { ...defaultDelivery, attempts: 3, baseDelayMs: 20, maxDelayMs: 50, timeoutMs: 500 }, ...config },
    env: { S: "hmac-secret-for-tests" },
    logger: silentLogger(),
    registry,
    dispatcher,
    ownUrl: () => "http://127.0.0.1:9",
  });
  return notifier;
}

const until = async (check: () => boolean, ms = 5000): Promise<void> => {
  await eventually(check, (held) => held, ms, undefined, 20);
};

describe("events of runs", () => {
  it("reports a failure once while it stays the same, and its recovery", () => {
    const failing = report({ result: "partial", revision: "r1", summary: summary(["OrgKey/a"], []) });
    const first = eventsOfRun(failing, undefined);
    expect(first.events.map((e) => e.event)).toEqual(["run-failed"]);
    expect(eventsOfRun(failing, first.failure).events).toEqual([]);
    expect(
      eventsOfRun(report({ result: "partial", revision: "r1", summary: summary(["OrgKey/a", "OrgKey/b"], []) }), first.failure).events.map((e) => e.event),
    ).toEqual(["run-failed"]);
    expect(eventsOfRun(report({ result: "applied" }), first.failure).events.map((e) => e.event)).toEqual(["recovered"]);
    expect(eventsOfRun(report({ result: "applied" }), undefined).events).toEqual([]);
    // the same refused revision, reported again without its error: once
    const refused = eventsOfRun(report({ result: "invalid", revision: "r2", error: "1 error", diagnostics: [] }), undefined);
    expect(eventsOfRun(report({ result: "invalid", revision: "r2" }), refused.failure).events).toEqual([]);
  });

  it("gives the commit status: needs a person for in-doubt, failure for failed or refused, success otherwise", () => {
    expect(finalStatus(report({ result: "partial", commit: "c", summary: summary(["a"], ["b"]) }))).toMatchObject({
      state: "needs-person",
      description: "needs a person: 1 resource in doubt, 1 failed",
    });
    expect(finalStatus(report({ result: "partial", commit: "c", summary: summary(["a"], []) }))!.state).toBe("failure");
    expect(finalStatus(report({ result: "invalid", commit: "c", diagnostics: [] }))!.state).toBe("failure");
    expect(finalStatus(report({ result: "error", commit: "c", error: "x".repeat(300) }))!.description.length).toBe(140);
    expect(finalStatus(report({ result: "applied", commit: "c", summary: summary([], []) }))!.state).toBe("success");
    expect(finalStatus(report({ result: "applied" }))).toBeUndefined();
  });

  it("asks a person only for what the next apply does not settle: an org key in doubt is written again", () => {
    const keyOnly = report({ result: "partial", commit: "c", revision: "r3", summary: summary([], ["OrgKey/acme"]) });
    const [keyEvent] = eventsOfRun(keyOnly, undefined).events;
    expect(keyEvent).toMatchObject({ event: "in-doubt", summary: "1 resource in doubt at c: written again by the next apply, nothing to do" });
    expect(finalStatus(keyOnly)).toMatchObject({ state: "pending", description: "1 resource in doubt, written again by the next run" });

    const mixed = report({ result: "partial", commit: "c", revision: "r4", summary: summary([], ["OrgKey/acme", "ApiProduct/shop", "PortalWebhook/crm"]) });
    const [mixedEvent] = eventsOfRun(mixed, undefined).events;
    expect(mixedEvent!.summary).toBe(
      "3 resources in doubt at c: 2 for a person to settle (gatesync state resolve); 1 written again by the next apply, nothing to do",
    );
    expect(finalStatus(mixed)).toMatchObject({ state: "needs-person", description: "needs a person: 2 resources in doubt" });
  });
});

describe("the notifier", () => {
  it("tells of leadership changes, scrubs registered secrets, and retries a 503 until delivered", async () => {
    const r = await startReceiver();
    receivers.push(r);
    registerSecret("a-secret-from-a-server-echo");
    const n = make({
      receivers: [{ name: "flaky", type: "webhook", url: `${r.url}/hook?status=503`, secretEnv: "S", events: ["leader-changed", "run-failed"] }],
    });
    n.leaderChanged(true);
    n.runFinished(report({ result: "error", revision: "r", error: "server said a-secret-from-a-server-echo" }));
    await until(() => r.received.length >= 6);
    const bodies = r.received.map((x) => JSON.parse(x.body) as { event: string; leader?: boolean; error?: string; deliveryId: string });
    expect(bodies.map((b) => b.event)).toEqual(["leader-changed", "leader-changed", "leader-changed", "run-failed", "run-failed", "run-failed"]);
    // one delivery id across its tries
    expect(new Set(bodies.slice(0, 3).map((b) => b.deliveryId)).size).toBe(1);
    expect(bodies[0]!.leader).toBe(true);
    expect(bodies[3]!.error).toBe("server said [redacted]");
  });

  it("does not retry a refusal (4xx), drops the oldest beyond the queue bound, and never throws or waits", async () => {
    const r = await startReceiver();
    receivers.push(r);
    const registry = new Registry();
    const n = make(
      {
        receivers: [{ name: "refusing", type: "webhook", url: `${r.url}/x?status=400&delay=100`, secretEnv: "S", events: ["leader-changed"] }],
        delivery: { ...defaultDelivery, attempts: 3, baseDelayMs: 10, maxDelayMs: 10, timeoutMs: 500, queueLimit: 2 },
      },
      registry,
    );
    // leaderChanged returns void (it cannot make the daemon wait); a wall-clock bound here broke on a loaded machine
    for (let i = 0; i < 6; i++) n.leaderChanged(i % 2 === 0);
    expect(r.received).toHaveLength(0); // nothing was sent before the caller went on
    await until(() => r.received.length >= 3);
    await new Promise((res) => setTimeout(res, 300));
    // the first went out at once; of the five queued behind it, two were kept
    expect(r.received).toHaveLength(3);
    const text = await registry.metrics();
    expect(text).toContain('gatesync_notifications_total{receiver="refusing",event="leader-changed",outcome="dropped"} 3');
    expect(text).toContain('gatesync_notifications_total{receiver="refusing",event="leader-changed",outcome="failed"} 3');
    expect(text).toContain('gatesync_notification_attempts_total{receiver="refusing",code="400"} 3');
  });

  it("refuses to start when a receiver's secret is not set", () => {
    expect(() =>
      make({ receivers: [{ name: "gh", type: "github", apiUrl: "http://127.0.0.1:1", repository: "a/b", tokenEnv: "NOPE", context: "gatesync", events: [] }] }),
    ).toThrow(/receiver gh: NOPE is not set/);
  });
});
