/**
 * The `frozen` notification is sent when a sync window closes or opens, not only on a freeze or
 * an unfreeze (docs/user/promotion.md#freezes-and-windows): staging denied for 5 s of every 10,
 * its webhook receiver is told "staging in its deny window … until …" when one closes it and
 * "staging sync window open: it applies what waited" when it opens — with no push, sync or page
 * asked in between. On the old code the hold changed silently (only the freeze endpoint told it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { acmeKey, promoteToken, promotionDaemon } from "../helpers/promotion-daemon.js";
import { call } from "../helpers/sandbox.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";
import { startReceiver } from "../helpers/receiver.js";
import type { Receiver } from "../helpers/receiver.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

let receiver: Receiver;
let d: PromotionDaemon | undefined;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await d?.stop();
  await receiver.stop();
  await removeTempRepos();
});

describe("a sync window's change", () => {
  it("is told to the environment's receivers as a frozen event, closing and opening", async () => {
    const stagingSettings =
      `    notifications: { receivers: [{ type: webhook, url: "${receiver.url}", secretEnv: SYNC_TOKEN }] }\n` +
      `    windows: [{ kind: deny, schedule: "*/10 * * * * *", duration: 5s }]\n`;
    d = await promotionDaemon(acmeKey(10), "manual", { stagingSettings });
    const frozen = (): string[] =>
      receiver.received
        .map((r) => JSON.parse(r.body) as { event: string; summary: string })
        .filter((e) => e.event === "frozen")
        .map((e) => e.summary);
    const told = await eventually(
      () => Promise.resolve(frozen()),
      (s) => s.some((m) => /^staging in its deny window/.test(m)) && s.some((m) => m === "staging sync window open: it applies what waited"),
      30_000,
    );
    expect(told.find((m) => m.startsWith("staging in its deny window"))).toMatch(
      /^staging in its deny window \(deny "\*\/10 \* \* \* \* \*" UTC\) until (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC$/,
    );
    // told once per change: never twice the same in a row
    expect(told.every((m, i) => i === 0 || m !== told[i - 1])).toBe(true);
  }, 60_000);

  it("is told when a freeze ends by its --until, with no unfreeze asked", async () => {
    await d?.stop();
    const stagingSettings = `    notifications: { receivers: [{ type: webhook, url: "${receiver.url}", secretEnv: SYNC_TOKEN }] }\n`;
    d = await promotionDaemon(acmeKey(10), "manual", { stagingSettings });
    const until = new Date(Date.now() + 2_000).toISOString();
    const frozen = await call(`${d.daemon.url!}/environments/staging/freeze`, {
      method: "POST",
      headers: { authorization: `Bearer ${promoteToken}`, "content-type": "application/json" },
      body: { reason: "a short freeze", until },
    });
    expect(frozen.status).toBe(200);
    const told = await eventually(
      () => Promise.resolve(receiver.received.map((r) => JSON.parse(r.body) as { event: string; summary: string })),
      (events) => events.some((e) => e.event === "frozen" && e.summary === "staging freeze ended at its --until: it applies what waited"),
      20_000,
    );
    expect(told.filter((e) => e.summary.endsWith("freeze ended at its --until: it applies what waited"))).toHaveLength(1);
  }, 60_000);
});
