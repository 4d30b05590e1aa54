/**
 * The status page in a real browser (Debian's Chromium through playwright-core): `gatesync run`
 * as a child process applies the examples into the sandbox, one kind's creates lose their
 * answers (in doubt), then a broken file is refused. Every page is checked as a person sees it,
 * searched for the planted secrets, and used again behind a reverse proxy's path prefix.
 */
import { cp, readFile, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { exampleSecrets } from "../helpers/apply.js";
import { launchBrowser, pageProblems, screenshotDir } from "../helpers/browser.js";
import { sandboxTargets, spawnDaemon } from "../helpers/daemon-process.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { eventually as poll } from "../helpers/eventually.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const syncToken = "status-page-sync-token";
let sandbox: SandboxHandle;
let dir: string;
let daemon: DaemonProcess;
let url: string;
let browser: Browser;
let proxy: Server;
let proxyUrl: string;

interface Status {
  lastRun: { result: string; reason: string } | null;
}
const status = async (): Promise<Status> => (await call(`${url}/status`)).body as Status;
const eventually = <T>(read: () => Promise<T> | T, check: (v: T) => boolean): Promise<T> =>
  poll(read, check, 20_000, () => `\n${daemon.output().slice(-3000)}`);

/** A reverse proxy serving the daemon below /gatesync/ (as an ingress with a path prefix would). */
async function startProxy(target: string): Promise<Server> {
  const t = new URL(target);
  const server = createServer((req, res) => {
    if (!(req.url ?? "").startsWith("/gatesync/")) {
      res.writeHead(404).end("not behind the prefix");
      return;
    }
    const upstream = httpRequest(
      { host: t.hostname, port: t.port, method: req.method, path: req.url!.slice("/gatesync".length), headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on("error", () => res.destroy());
        answer.pipe(res);
      },
    );
    // a page that navigates away closes its live stream mid-answer: each side just ends
    upstream.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.on("error", () => upstream.destroy());
    res.on("error", () => upstream.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  // LLM settings creates are processed but their answers are lost: both end in doubt
  sandbox = await testSandbox({ faults: { lostResponseRate: 1, interfaces: ["llm"] } });
  dir = await tempRepo();
  await cp(path.join(projectRoot, "examples/config"), path.join(dir, "config"), { recursive: true });
  await cp(path.join(projectRoot, "examples/secrets"), path.join(dir, "secrets"), { recursive: true });
  await writeFile(
    path.join(dir, "gatesync.yaml"),
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config, watch: true }
${sandboxTargets(sandbox)}
state: { backend: sqlite, path: ./state/state.db }
secrets: { fileRoot: ./secrets, env: [PETSTORE_MOBILE_CLIENT_SECRET, CRM_HOOK_TOKEN, CHAT_WEBHOOK_TOKEN] }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
retries: { max: 1, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 20000 }
`,
  );
  daemon = await spawnDaemon(path.join(dir, "gatesync.yaml"), dir, { SYNC_TOKEN: syncToken });
  url = daemon.url;
  await eventually(status, (s) => s.lastRun !== null);
  proxy = await startProxy(url);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/gatesync/`;
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  proxy?.close();
  if (daemon?.child.exitCode === null) daemon.child.kill("SIGKILL");
  await sandbox?.stop();
  await removeTempRepos();
});

const planted = Object.values(exampleSecrets);

function expectNoSecret(text: string, where: string): void {
  for (const secret of planted) expect(text.includes(secret), `${where} holds a secret`).toBe(false);
}

describe("the status page", () => {
  it("overview: the commit, the last run and the counts by status", async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    await page.goto(`${url}/`);
    expect(await page.locator("h1").textContent()).toBe("Overview");
    expect(await page.locator('[data-count="applied"] .n').textContent()).toBe("15");
    expect(await page.locator('[data-count="in-doubt"] .n').textContent()).toBe("2");
    expect(await page.locator('[data-count="failed"] .n').textContent()).toBe("0");
    expect(await page.locator("[data-health-ok]").textContent()).toBe("1");
    await expect.poll(() => page.locator("section", { hasText: "Last run" }).textContent()).toContain("partial");
    expect(await page.locator("figure.chart svg rect.bar").count()).toBeGreaterThanOrEqual(1);
    await shot(page, "overview");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("resources: the table filters by kind, status, label and text, and sorts", async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    await page.goto(`${url}/resources`);
    const rows = page.locator("table.resources tbody tr:not([hidden])");
    expect(await rows.count()).toBe(17);
    await page.selectOption('select[name="kind"]', "LlmSettings");
    expect(await rows.count()).toBe(2);
    expect(await page.locator("#shown-count").textContent()).toBe("2");
    expect(page.url()).toContain("kind=LlmSettings");
    await page.selectOption('select[name="kind"]', "");
    await page.fill('input[name="label"]', "team=storefront");
    expect(await rows.allTextContents()).toEqual([expect.stringContaining("petstore")]);
    await page.fill('input[name="label"]', "");
    await page.selectOption('select[name="status"]', "in-doubt");
    expect(await rows.count()).toBe(2);
    await page.selectOption('select[name="status"]', "");
    await page.fill('input[name="q"]', "webhook");
    expect(await rows.count()).toBe(4);
    await page.fill('input[name="q"]', "");
    // sorting by name, then the other way
    await page.click('th[data-sort="name"]');
    const names = await page.locator("table.resources tbody tr td:nth-child(2)").allTextContents();
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
    await page.click('th[data-sort="name"]');
    const reversed = await page.locator("table.resources tbody tr td:nth-child(2)").allTextContents();
    expect(reversed).toEqual([...names].reverse());
    // without script, the same filter is the form's query
    const filtered = await call(`${url}/resources?status=in-doubt`);
    expect(filtered.text.match(/<tr data-kind=/g)).toHaveLength(2);
    await shot(page, "resources");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a resource in doubt shows the command that settles it; its request shows secrets as (sensitive)", async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    await page.goto(`${url}/resources?kind=LlmSettings`);
    await page.click("text=support-assistant");
    await page.waitForURL(/\/resources\/LlmSettings\/support-assistant$/);
    const commands = await page.locator("[data-resolve]").textContent();
    expect(commands).toContain("gatesync state resolve LlmSettings/support-assistant --id <server id>");
    expect(commands).toContain("gatesync state resolve LlmSettings/support-assistant --forget");
    await shot(page, "resource-in-doubt");
    await page.goto(`${url}/resources/OAuthClient/petstore-mobile`);
    const request = await page.locator("section", { hasText: "Last applied request" }).textContent();
    expect(request).toContain('"secret": "(sensitive)"');
    expect(request).toContain("mobile-default");
    expect((await call(`${url}/resources/OAuthClient/nope`)).status).toBe(404);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("runs: a refused commit shows its errors with file and line; the page updates live", async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    // the live stream is held back until the run has ended: a run that ends between drawing the
    // page and the stream connecting must still redraw it (the page carries the run it was drawn at)
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/ui/events", async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${url}/runs`);
    const before = await page.locator("table.runs tbody tr[id^=run-]").count();
    const file = path.join(dir, "config/llm/settings.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("temperature: 0.0", "temperature: icy"));
    // the daemon watches the directory: the run comes by itself. Other runs may come too (the
    // first run ended partial, so a retry follows on its backoff): the refused run is the one
    // awaited, not a count of runs.
    await eventually(status, (s) => s.lastRun?.result === "invalid");
    expect(await page.locator("table.runs tbody tr[id^=run-]").count()).toBe(before);
    release();
    // and the open page follows it as soon as its stream connects
    const newest = page.locator("table.runs tbody tr[id^=run-]").first();
    await expect.poll(() => newest.getAttribute("data-result"), { timeout: 20_000 }).toBe("invalid");
    expect(await page.locator("table.runs tbody tr[id^=run-]").count()).toBeGreaterThan(before);
    const details = await page.locator("tr.run-detail").first().textContent();
    expect(details).toMatch(/llm\/settings\.yaml:30:\d+/);
    expect(details).toContain("SCHEMA_VIOLATION");
    await shot(page, "runs");
    const plan = await call(`${url}/plan`);
    expect(plan.text).toContain("does not validate");
    // every resource is still in the repository: its page describes the last good commit and
    // says the newer one is refused, linking to its errors and the run that refused it
    const refusedRun = await newest.getAttribute("id");
    await page.goto(`${url}/resources/OrgKey/globex`);
    const next = page.locator("section", { hasText: "Next run" });
    expect(await next.textContent()).not.toContain("Not in the repository any more");
    expect(await next.locator("[data-refused-commit]").textContent()).toMatch(/A newer commit, .+, is refused: it does not validate \(1 error, run #\d+\)/);
    expect(await page.locator("section", { hasText: "Record" }).first().textContent()).toContain("applied");
    expect(await next.locator(`a[href$="#${refusedRun!}"]`).count()).toBe(1);
    await next.getByRole("link", { name: "1 error" }).click();
    await page.waitForURL(/\/plan$/);
    expect(await page.locator("main").textContent()).toMatch(/llm\/settings\.yaml:30:\d+/);
    await page.goto(`${url}/resources`);
    expect(await page.locator("[data-refused-commit]").textContent()).toContain("is refused");
    await shot(page, "resources-refused");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("plan: what the next run would do, and the live progress of a run", async () => {
    const file = path.join(dir, "config/llm/settings.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("temperature: icy", "temperature: 0.0"));
    await writeFile(
      path.join(dir, "config/gateway/org-keys.yaml"),
      (await readFile(path.join(dir, "config/gateway/org-keys.yaml"), "utf8")).replace(
        "  rate: 100\n  per: 60\n  quota_max: 10000\n",
        "  rate: 120\n  per: 60\n  quota_max: 10000\n",
      ),
    );
    await eventually(
      () => sandbox.inspect.store.orgKeys.get("globex")?.session.rate,
      (rate) => rate === 120,
    );
    await eventually(status, (s) => s.lastRun?.result === "applied" && s.lastRun.reason === "file change");
    const page = await browser.newPage();
    const problems = pageProblems(page);
    await page.goto(`${url}/plan`);
    expect(await page.locator("[data-plan-summary]").textContent()).toContain("2 blocked");
    expect(await page.locator("table.plan").textContent()).toContain("LlmSettings/support-assistant");
    await shot(page, "plan");
    // a run started by the sync trigger is followed live: its sequence number reaches the page
    const seq = Number(await page.locator("body").getAttribute("data-live-seq"));
    expect((await call(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).status).toBe(202);
    await expect.poll(async () => Number(await page.locator("body").getAttribute("data-live-seq")), { timeout: 20_000 }).toBeGreaterThan(seq);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows the progress of a run while it goes", async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    await page.goto(`${url}/`);
    sandbox.inspect.setFaults({ latencyMs: 700, interfaces: ["portal"] });
    try {
      const file = path.join(dir, "config/portal/webhooks.yaml");
      await writeFile(file, (await readFile(file, "utf8")).replaceAll(/Timeout: \d+/g, "Timeout: 7"));
      await page.locator("#live").waitFor({ state: "visible", timeout: 20_000 });
      // polled: a retry on the backoff of an earlier partial run may show first
      await expect.poll(() => page.locator("#live-text").textContent(), { timeout: 20_000 }).toMatch(/^run \(file change\): \d+\/2/);
      await shot(page, "overview-live");
      await page.locator("#live").waitFor({ state: "hidden", timeout: 20_000 });
    } finally {
      sandbox.inspect.setFaults({ latencyMs: 0, interfaces: ["llm"] });
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it("works behind a path prefix, under its Content-Security-Policy, and is read-only", async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    await page.goto(proxyUrl);
    expect(await page.locator("h1").textContent()).toBe("Overview");
    await page.click("nav >> text=Resources");
    await page.waitForURL(`${proxyUrl}resources`);
    await page.click("text=petstore-mobile");
    await page.waitForURL(`${proxyUrl}resources/OAuthClient/petstore-mobile`);
    // the stylesheet and script came through the prefix
    expect(await page.evaluate("getComputedStyle(document.querySelector('header')).display")).toBe("flex");
    await page.click("nav >> text=Runs");
    await page.waitForURL(`${proxyUrl}runs`);
    await page.click("nav >> text=Overview");
    expect(await page.locator("h1").textContent()).toBe("Overview");
    expect(problems).toEqual([]);
    const root = await call(`${url}/`);
    expect(root.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(root.text).not.toMatch(/<script>|<script[^>]*>[^<]|\son[a-z]+=|style=/);
    expect(root.text).not.toMatch(/<form[^>]*method="post"/i);
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      for (const p of ["/", "/resources", "/runs", "/plan", "/resources/LlmSettings/support-assistant"])
        expect((await call(`${url}${p}`, { method })).status).toBe(405);
    }
    await page.close();
  });

  it("shows no secret on any page", async () => {
    const paths = ["/", "/resources", "/runs", "/plan", "/ui/app.js"];
    const ids = ((await call(`${url}/status`)).body as { resources: Array<{ id: string }> }).resources.map((r) => r.id);
    for (const id of ids) paths.push(`/resources/${id}`);
    for (const p of paths) {
      const page = await call(`${url}${p}`);
      expect(page.status, p).toBe(200);
      expectNoSecret(page.text, p);
    }
    expect(paths.length).toBeGreaterThan(20);
  });
});
