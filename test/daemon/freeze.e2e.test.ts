/**
 * Freezes and sync windows (docs/user/promotion.md#freezes-and-windows), end to end: a daemon
 * over a real git repository and two sandboxes, production promoted from staging with
 * `promotion: auto`. `gatesync freeze production` holds it: staging verifies a new revision and
 * production plans it but sends nothing and promotes nothing — its own runs, the candidate's
 * wake-up, `promote` — until `--override-freeze` (recorded on the promotion's row) or
 * `gatesync unfreeze`, which applies what waited. /status and the gauge say so. A deny window in
 * force holds staging the same way, and when it closes by itself staging applies what waited.
 */
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { environmentsOf } from "../../src/config/environments.js";
import { openStateBackend } from "../../src/record/open-backend.js";
import { readPromotions } from "../../src/record/history/promotion-history.js";
import { readFreezes } from "../../src/record/history/freeze-history.js";
import { runCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { acmeKey, acmeRate, promoteToken, promotionDaemon, untilAcmeRate } from "../helpers/promotion-daemon.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

const errorOf = (body: unknown): string => (body as { error?: string }).error ?? "";

let d: PromotionDaemon | undefined;
afterAll(async () => {
  await d?.stop();
  await removeTempRepos();
});

/** The environment's rows as its state holds them (another process reading the same file). */
async function rows(
  daemon: PromotionDaemon,
  name: string,
): Promise<{ promotions: Awaited<ReturnType<typeof readPromotions>>; freezes: Awaited<ReturnType<typeof readFreezes>> }> {
  const environment = environmentsOf(await loadConfig(daemon.operatorFile)).find((e) => e.name === name)!;
  const state = openStateBackend(environment.config, daemon.env);
  try {
    return { promotions: await readPromotions(state, 20), freezes: await readFreezes(state, 20) };
  } finally {
    await state.close();
  }
}

const holdOf = async (daemon: PromotionDaemon, name: string): Promise<{ kind: string; message: string; until?: string } | null> => {
  const status = (await call(`${daemon.daemon.url}/status`)).body as {
    environments: Array<{ environment: string; hold: { kind: string; message: string; until?: string } | null }>;
  };
  return status.environments.find((e) => e.environment === name)!.hold;
};

const cli = (daemon: PromotionDaemon, ...args: string[]): ReturnType<typeof runCli> =>
  runCli([...args, "--daemon", daemon.daemon.url!], { GATESYNC_PROMOTE_TOKEN: promoteToken });

/** The words after `gatesync` of the command a hold's hint says goes through it, as printed. */
const throughCommand = (hint: string): string[] => (/`gatesync ((?:promote|rollback) [^`]+--override-freeze)`/.exec(hint)?.[1] ?? "missing").split(" ");

describe("freezes", () => {
  it("a frozen production plans but applies and promotes nothing until overridden or unfrozen, then applies what waited", async () => {
    d = await promotionDaemon(acmeKey(10), "auto");
    const daemon = d;
    await untilAcmeRate(daemon, "production", 10);
    const frozen = await cli(daemon, "freeze", "production", "--reason", "incident 4521", "--until", "2h");
    expect(frozen.stderr).toBe("");
    expect(frozen.stdout).toMatch(/^production frozen until (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC: incident 4521: it plans but applies and promotes nothing/);
    expect((await holdOf(daemon, "production"))?.message).toMatch(/^production frozen until (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC: incident 4521$/);
    const page = await (await fetch(`${daemon.daemon.url}/environments/production/`)).text();
    expect(page).toMatch(/production frozen until [^<]*: incident 4521<\/span>: it plans but applies and promotes nothing/);
    expect(page).toContain("gatesync unfreeze production");
    expect(await (await fetch(`${daemon.daemon.url}/metrics`)).text()).toMatch(/gatesync_environment_held\{kind="freeze",environment="production"\} 1/);

    const second = await daemon.push(acmeKey(20), "raise acme's rate");
    await daemon.sync();
    // staging (not frozen) applies and verifies it: a candidate production would take by itself
    await eventually(
      () => daemon.promote({ dryRun: true }),
      (a) => a.status === 200 && (a.body as { revision: string }).revision === second,
    );
    const calls = daemon.production.inspect.calls().log.length;
    // its own run is a decision: the candidate is not promoted (production stays on what it had, nothing to apply)
    const run = await daemon.daemon.environments.get("production")!.runOnce("schedule");
    expect(run.revision).not.toBe(second);
    expect(acmeRate(daemon, "production")).toBe(10);
    expect(daemon.production.inspect.calls().log.length).toBe(calls);
    expect((await rows(daemon, "production")).promotions.map((p) => p.record.revision)).not.toContain(second);
    // a person's promote is refused with the freeze, and says how to go through it
    const refused = await daemon.promote({ revision: second });
    expect(refused.status).toBe(409);
    expect(errorOf(refused.body)).toMatch(/^production frozen until .*: incident 4521: it promotes and rolls back nothing while it lasts$/);
    const hint = (refused.body as { hint: string }).hint;
    expect(hint).toContain(`\`gatesync promote production --revision ${second} --override-freeze\``);

    // the override, as the hint says: promoted through the freeze, applied, recorded
    const through = await cli(daemon, ...throughCommand(hint));
    expect(through.stdout).toContain("through the hold (production frozen until");
    await untilAcmeRate(daemon, "production", 20);
    expect((await rows(daemon, "production")).promotions[0]!.record).toMatchObject({
      revision: second,
      overrideFreeze: expect.stringContaining("incident 4521") as unknown,
    });

    // still frozen: the next candidate waits
    const third = await daemon.push(acmeKey(30), "raise acme's rate again");
    await daemon.sync();
    await eventually(
      () => daemon.promote({ dryRun: true }),
      (a) => a.status === 200 && (a.body as { revision: string }).revision === third,
    );
    expect((await daemon.daemon.environments.get("production")!.runOnce("schedule")).revision).toBe(second);
    expect(acmeRate(daemon, "production")).toBe(20);

    // unfrozen: what waited is promoted (promotion: auto) and applied without another push or sync
    const unfrozen = await cli(daemon, "unfreeze", "production", "--reason", "incident closed");
    expect(unfrozen.stdout).toBe("production unfrozen: it applies what waited now\n");
    await untilAcmeRate(daemon, "production", 30);
    expect(await holdOf(daemon, "production")).toBeNull();
    const audit = (await rows(daemon, "production")).freezes.map((f) => [f.record.frozen, f.record.reason, f.record.by]);
    expect(audit).toEqual([
      [false, "incident closed", "PROMOTE_TOKEN"],
      [true, "incident 4521", "PROMOTE_TOKEN"],
    ]);

    // frozen again, a rollback is refused alike: its hint goes back to the revision asked (never forward, never nowhere)
    expect((await cli(daemon, "freeze", "production", "--reason", "incident 4522")).code).toBe(0);
    const back = await cli(daemon, "rollback", "production", "--steps", "1", "--auto-approve");
    expect(back.code).not.toBe(0);
    const backHint = /hint: (.*)/.exec(back.stderr)?.[1] ?? "";
    expect(backHint).toContain(`\`gatesync rollback production --to ${second} --override-freeze\``);
    const gone = await cli(daemon, ...throughCommand(backHint), "--auto-approve");
    expect(gone.code, gone.stdout + gone.stderr).toBe(0);
    await untilAcmeRate(daemon, "production", 20);
    expect((await cli(daemon, "unfreeze", "production")).code).toBe(0);
  }, 120_000);

  it("a deny window holds staging; when it closes, staging applies what waited by itself", async () => {
    const daemon = d!;
    // deny for 12 s from :00, :20 and :40 of every minute (a short cycle: the wait for its phase and its close is short too; 8 s open between)
    const text = await readFile(daemon.operatorFile, "utf8");
    await writeFile(
      daemon.operatorFile,
      text.replace("    soak: 1s\n", `    soak: 1s\n    windows: [{ kind: deny, schedule: "0,20,40 * * * * *", duration: 12s, timeZone: Europe/Berlin }]\n`),
    );
    expect(await daemon.daemon.reload("test")).toBe("reloaded");
    // held with at least 8 s of the window left
    await eventually(
      () => holdOf(daemon, "staging"),
      (h) => h?.kind === "window" && h.until !== undefined && Date.parse(h.until) - Date.now() > 8_000,
      40_000,
    );
    const calls = daemon.staging.inspect.calls().log.length;
    await daemon.push(acmeKey(40), "raise acme's rate once more");
    await daemon.sync();
    const run = await daemon.daemon.environments.get("staging")!.runOnce("webhook");
    expect(run.result).toBe("frozen");
    expect(run.error).toMatch(/^staging in its deny window \(deny "0,20,40 \* \* \* \* \*" Europe\/Berlin\) until (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC$/);
    expect(acmeRate(daemon, "staging")).toBe(30);
    expect(daemon.staging.inspect.calls().log.length).toBe(calls);
    // the window closes: no push, no sync — the daemon looks again then and applies
    await untilAcmeRate(daemon, "staging", 40, 30_000);
    // up to 20 s of wait for the window's phase, then 12 s for its close: the waits above bound it
  }, 90_000);
});
