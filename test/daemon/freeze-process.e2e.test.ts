/**
 * Freezes met through a real `gatesync run` process (docs/user/promotion.md#freezes-and-windows):
 * `gatesync freeze production` through the real CLI, then a merge request's CI job (a real CLI
 * process, CI=true, `plan --state-url` with the state token) says in its comment and its text
 * plan that production is frozen and that the merge is applied there when the hold lifts — the
 * daemon's `GET /config` serves each environment's hold. The freeze is a row of production's
 * state: the daemon stopped (SIGTERM) and started again on the same state still holds it.
 * On the old code `/config` served no hold and the comment said nothing of it.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../helpers/cli.js";
import { committedRepo } from "../helpers/git-repo.js";
import { spawnDaemon, stopDaemon } from "../helpers/daemon-process.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { acmeKey, everyToken, everyTokenEnv, pagesReader, spawnedPromotionDaemon } from "../helpers/promotion-daemon.js";
import type { SpawnedPromotionDaemon } from "../helpers/promotion-daemon.js";
import { eventually } from "../helpers/eventually.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

let d: SpawnedPromotionDaemon;
let restarted: DaemonProcess | undefined;
beforeAll(async () => {
  d = await spawnedPromotionDaemon(acmeKey(10));
}, 90_000);
afterAll(async () => {
  await stopDaemon(restarted);
  await d?.stop();
  await removeTempRepos();
});

const freeze = (url: string, environment = "production"): ReturnType<typeof runCli> =>
  runCli(["freeze", environment, "--reason", "incident 4521 <b>@team</b>", "--until", "2h", "--daemon", url], { GATESYNC_PROMOTE_TOKEN: everyToken.promote });

/** A merge request's CI job raising acme's rate, planned against the daemon. */
async function mergeRequestPlan(url: string, format: "markdown" | "text"): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const settings =
    'apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: { gateway: { url: "http://127.0.0.1:1", credentialEnv: GW_KEY } }\nstate: { backend: sqlite, path: .gatesync/state.db }\n';
  const { dir } = await committedRepo({ "gatesync.yaml": settings, ...acmeKey(20) });
  return spawnCli(["plan", "--config", "gatesync.yaml", "--dir", "config", "--format", format, "--allow-empty-state", "--state-url", url], {
    cwd: dir,
    env: { CI: "true", GATESYNC_STATE_TOKEN: everyToken.state, NO_COLOR: "1" },
  });
}

const holdLine = /production frozen until (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC: incident 4521/;

describe("a freeze through a real daemon process", () => {
  it("is said in a merge request's plan, markdown and text, for the environment it holds only", async () => {
    const frozen = await freeze(d.url);
    expect(frozen.stderr).toBe("");
    const markdown = await mergeRequestPlan(d.url, "markdown");
    expect(markdown.code, markdown.stderr).toBe(0);
    const held = markdown.stdout.split("\n").filter((l) => l.includes("held"));
    expect(held).toHaveLength(1);
    expect(held[0]).toMatch(
      /^ {2}- ⏸ \*\*held\*\*: production frozen until .* UTC: incident 4521 \\<b\\>@team\\<\/b\\> — the merge is applied there when the hold lifts$/,
    );
    // the line sits under production's summary line, not staging's
    const lines = markdown.stdout.split("\n");
    expect(lines[lines.indexOf(held[0]!) - 1]).toMatch(/^- `production`: /);
    const text = await mergeRequestPlan(d.url, "text");
    expect(text.stdout).toMatch(new RegExp(`== environment production ==\\nheld: ${holdLine.source}`));
    expect(text.stdout).not.toMatch(/== environment staging ==\nheld/);
  }, 90_000);

  it("holds after the daemon is stopped and started again on the same state", async () => {
    const before = await call(`${d.url}/environments/production/status`, pagesReader);
    expect(JSON.stringify(before.body)).toMatch(holdLine);
    await stopDaemon(d.process);
    restarted = await spawnDaemon(d.operatorFile, path.dirname(d.operatorFile), everyTokenEnv);
    const status = await call(`${restarted.url}/environments/production/status`, pagesReader);
    expect(status.status).toBe(200);
    expect((status.body as { hold: { message: string } | null }).hold?.message).toMatch(holdLine);
    const ask = (body: object): ReturnType<typeof call> =>
      call(`${restarted!.url}/environments/production/promote`, {
        method: "POST",
        headers: { authorization: `Bearer ${everyToken.promote}`, "content-type": "application/json" },
        body,
      });
    // a candidate to refuse: staging has verified a revision (a dry run is not held; on a slow
    // machine staging's first verification may come after the restart)
    await eventually(
      () => ask({ dryRun: true }),
      (a) => a.status === 200,
    );
    const promote = await ask({});
    expect(promote.status).toBe(409);
    expect((promote.body as { error: string }).error).toMatch(holdLine);
  }, 90_000);

  it("is a banner on the overview page of any held environment, promoted or not", async () => {
    const url = restarted!.url;
    const page = async (name: string): Promise<string> => (await fetch(`${url}/environments/${name}/`, pagesReader)).text();
    expect(await page("staging")).not.toContain("data-held");
    expect((await freeze(url, "staging")).stderr).toBe("");
    const staging = await page("staging");
    // the reason is the operator's text: escaped, never markup
    expect(staging).toMatch(
      /<section class="held" data-held="freeze"><p>⏸ <span class="warn">staging frozen until [^<]* UTC: incident 4521 &lt;b&gt;@team&lt;\/b&gt;<\/span>: it plans but applies and promotes nothing while it lasts/,
    );
    expect(await page("production")).toContain('data-held="freeze"');
  }, 90_000);
});
