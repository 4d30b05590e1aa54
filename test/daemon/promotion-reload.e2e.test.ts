/**
 * Every promotion setting follows a reload (docs/user/promotion.md): a daemon over a real git
 * repository and two sandboxes, production promoted from staging. Switching production from
 * `promotion: auto` to `manual` in the daemon's file (staging's soak changed in the same edit) and
 * reloading freezes it: a revision staging verifies afterwards is not promoted — production's own
 * runs, each a decision, leave it where it is — until `gatesync promote`; switching back to `auto`
 * takes effect without a restart.
 */
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { acmeKey, acmeRate, promotionDaemon, untilAcmeRate } from "../helpers/promotion-daemon.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";
import { loadConfig } from "../../src/config/config.js";
import { environmentsOf } from "../../src/config/environments.js";
import { openStateBackend } from "../../src/record/open-backend.js";
import { readPromotions } from "../../src/record/history/promotion-history.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

let d: PromotionDaemon | undefined;
afterAll(async () => {
  await d?.stop();
  await removeTempRepos();
});

/** Rewrites the daemon's file (production's `promotion:` and staging's soak in one edit) and reloads it. */
async function switchTo(daemon: PromotionDaemon, mode: "auto" | "manual", soak: string): Promise<void> {
  const text = await readFile(daemon.operatorFile, "utf8");
  await writeFile(daemon.operatorFile, text.replace(/promotion: \w+/, `promotion: ${mode}`).replace(/soak: \w+/, `soak: ${soak}`));
  expect(await daemon.daemon.reload("test")).toBe("reloaded");
}

/** The promotions production's state holds, newest first (revision:actor), read as another process would. */
async function promotions(daemon: PromotionDaemon): Promise<string[]> {
  const production = environmentsOf(await loadConfig(daemon.operatorFile)).find((e) => e.name === "production")!;
  const state = openStateBackend(production.config, daemon.env);
  try {
    return (await readPromotions(state, 20)).map((p) => `${p.record.revision}:${p.record.actor.by}`);
  } finally {
    await state.close();
  }
}

describe("promotion settings follow a reload", () => {
  it("auto → manual freezes production until a manual promote; manual → auto promotes again without a restart", async () => {
    d = await promotionDaemon(acmeKey(10), "auto");
    const daemon = d;
    await untilAcmeRate(daemon, "production", 10);
    await switchTo(daemon, "manual", "2s");
    const second = await daemon.push(acmeKey(20), "raise acme's rate");
    await daemon.sync();
    // staging verifies it: a candidate production could take
    const dry = await eventually(
      () => daemon.promote({ dryRun: true }),
      (a) => a.status === 200 && (a.body as { revision: string }).revision === second,
    );
    expect(dry.body).toMatchObject({ changes: 1 });
    // production decides again (its own runs, and the wake-up staging's verification asked for): nothing promoted
    const before = await promotions(daemon);
    expect(before.some((p) => p.startsWith(second))).toBe(false);
    await daemon.daemon.environments.get("production")!.runOnce("decision");
    expect(acmeRate(daemon, "production")).toBe(10);
    expect(await promotions(daemon)).toEqual(before);

    // a person promotes it
    expect((await daemon.promote({ revision: second })).status).toBe(202);
    await untilAcmeRate(daemon, "production", 20);
    expect((await promotions(daemon))[0]).toBe(`${second}:token`);

    // back to auto, without a restart: the next verified revision is promoted by the daemon
    await switchTo(daemon, "auto", "1s");
    const third = await daemon.push(acmeKey(30), "raise acme's rate again");
    await daemon.sync();
    await untilAcmeRate(daemon, "production", 30);
    expect((await promotions(daemon))[0]).toBe(`${third}:auto`);
  }, 120_000);
});
