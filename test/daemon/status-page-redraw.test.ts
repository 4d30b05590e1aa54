/**
 * The resources page redraws itself when a run ends (its live stream says so). The redraw is
 * fetched with the query of that moment: a filter a person types while it is on its way used to
 * be replaced by the fresh page's, and every row came back. Met in a real browser (Debian's
 * Chromium) against a real `gatesync run`, with the redraw held until the person has typed.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { launchBrowser, pageProblems } from "../helpers/browser.js";
import { sandboxTargets, spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const syncToken = "status-page-redraw-token";
let sandbox: SandboxHandle;
let daemon: DaemonProcess;
let browser: Browser;

const key = (name: string, team: string): string =>
  `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: ${name}, labels: { team: ${team} } }\nspec: { keyId: ${name}, rate: 5, per: 60 }\n`;

beforeAll(async () => {
  sandbox = await testSandbox();
  const dir = await tempRepo({ "config/keys.yaml": ["acme", "globex", "initech"].map((n, i) => key(n, i === 1 ? "storefront" : "checkout")).join("---\n") });
  await writeFile(
    path.join(dir, "gatesync.yaml"),
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
${sandboxTargets(sandbox)}
state: { backend: sqlite, path: ./state.db }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
`,
  );
  daemon = await spawnDaemon(path.join(dir, "gatesync.yaml"), dir, { SYNC_TOKEN: syncToken });
  await eventually(
    async () => (await call(`${daemon.url}/status`)).body as { lastRun: unknown },
    (s) => s.lastRun !== null,
  );
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (daemon?.child.exitCode === null) daemon.child.kill("SIGKILL");
  await sandbox?.stop();
  await removeTempRepos();
});

describe("the resources page redrawn after a run", () => {
  it("keeps the filter typed while the redraw was on its way: its value, its rows, its focus", async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    await page.goto(`${daemon.url}/resources`);
    const rows = page.locator("table.resources tbody tr:not([hidden])");
    await expect.poll(() => rows.count()).toBe(3);
    // the redraw's fetch is held until the filter is typed
    let heldOne: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (heldOne = resolve));
    let release: () => void = () => undefined;
    const typed = new Promise<void>((resolve) => (release = resolve));
    await page.route(
      (u) => u.pathname === "/resources",
      async (route) => {
        if (route.request().resourceType() === "fetch") {
          heldOne();
          await typed;
        }
        await route.continue();
      },
    );
    await page.evaluate('document.getElementById("main").dataset.drawn = "before"');
    const sync = await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
    expect(sync.status).toBe(202);
    await held;
    await page.fill('input[name="label"]', "team=storefront");
    await expect.poll(() => rows.count()).toBe(1);
    release();
    // (the page's CSP allows no eval: waitForFunction cannot run here)
    await expect.poll(async () => page.evaluate('document.getElementById("main")?.dataset.drawn ?? "redrawn"')).toBe("redrawn");
    expect(await page.inputValue('input[name="label"]')).toBe("team=storefront");
    expect(await rows.allTextContents()).toEqual([expect.stringContaining("globex")]);
    expect(await page.locator('input[name="label"]:focus').count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
