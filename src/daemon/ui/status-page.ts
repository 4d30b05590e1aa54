/**
 * The status page, served by the daemon at `/` beside its JSON endpoints: overview, resources,
 * one resource, runs and the next plan, plus live updates of the run in progress as
 * server-sent events. Read-only (GET and HEAD only), no secret (the data is redacted, and the
 * whole page passes the redaction layer), a strict Content-Security-Policy, and relative links
 * only, so it works behind a reverse proxy's path prefix.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { packageRoot } from "../../package-root.js";
import { scrubText as scrub } from "../../secrets/redaction.js";
import { html, layout, rootOf } from "./html.js";
import type { EnvironmentSwitch, Html, PageContext } from "./html.js";
import { overviewPage } from "./overview-page.js";
import { planPage } from "./plan-page.js";
import { resourcePage } from "./resource-page.js";
import { refusedCommitOf } from "./refused-commit.js";
import { invocationOf } from "../../printed-commands.js";
import { filterFrom, resourcesPage } from "./resources-page.js";
import { runsPage } from "./runs-page.js";
import type { LiveState } from "../history/run-history.js";
import { RenderedPages, TooBusy } from "./page-cache.js";
import type { Rendered } from "./page-cache.js";
import { viewOf } from "./view.js";
import type { View, ViewDeps } from "./view.js";

export interface StatusPageOptions extends ViewDeps {
  /** Live listeners (server-sent event streams) at once; more get 503. */
  readonly maxListeners?: number;
  /** Told when a page cannot be drawn (a bug). */
  readonly onError?: (err: unknown) => void;
  /** Least time between two live events to one listener. */
  readonly liveIntervalMs?: number;
  /** Pages drawn at once; more are answered 503 with Retry-After (default 2). */
  readonly maxRenders?: number;
  /** With environments: which one this page shows, and the others (the switcher). */
  readonly environments?: EnvironmentSwitch;
}

export interface StatusPage {
  /** Answers the page `ask` names; false when there is no such page (a resource id that does not decode). */
  serve(req: IncomingMessage, res: ServerResponse, ask: PageAsk): boolean;
}

export const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const securityHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

const assetsDir = path.join(packageRoot, "ui");
const assets: Partial<Record<PageName, { type: string; body: Buffer }>> = {
  "app.js": { type: "text/javascript; charset=utf-8", body: readFileSync(path.join(assetsDir, "app.js")) },
  "app.css": { type: "text/css; charset=utf-8", body: readFileSync(path.join(assetsDir, "app.css")) },
};

/** Why the next run has no plan to show, when it has none and its commit is not refused. */
function unplannedWhy(preview: View["preview"]): string | undefined {
  if (preview.kind === "none") return "The source has not been fetched yet: the next run's plan is not known.";
  if (preview.kind === "error") return `The next run could not be planned: ${preview.error}`;
  return undefined;
}

/** A page's body: undefined for "not found"; a promise where it reads the history's rows from the state. */
type Page = { title: string; nav: PageContext["nav"]; body: (view: View, root: string) => Html | undefined | Promise<Html | undefined> };

/** The pages, each a row of the route table (http/route-table.ts), which alone knows their paths. */
export type PageName = "overview" | "resources" | "resource" | "runs" | "plan" | "events" | "app.js" | "app.css";

/** What a page's route hands it: which page, and the URL below the environment as sent (its links are relative to it). */
export interface PageAsk {
  readonly page: PageName;
  /** The path below `/environments/NAME` and the query, e.g. `/resources?status=failed`. */
  readonly url: string;
  /** The route's parameters (`kind`, `name` of a resource), still percent-encoded. */
  readonly params: Readonly<Record<string, string>>;
}

function pageFor(ask: PageAsk, search: URLSearchParams, history: ViewDeps["history"]): Page | undefined {
  if (ask.page === "overview") return { title: "Overview", nav: "overview", body: (v) => overviewPage(v) };
  if (ask.page === "resources")
    return { title: "Resources", nav: "resources", body: (v, root) => resourcesPage(v.rows, filterFrom(search), root, refusedCommitOf(v)) };
  if (ask.page === "runs") return { title: "Runs", nav: "runs", body: async (v) => runsPage(await v.history.rows()) };
  if (ask.page === "plan") return { title: "Plan of the next run", nav: "plan", body: (v, root) => planPage(v.preview, root) };
  if (ask.page !== "resource") return undefined;
  let id: string;
  try {
    id = `${decodeURIComponent(ask.params.kind!)}/${decodeURIComponent(ask.params.name!)}`;
  } catch {
    return undefined;
  }
  return {
    title: id,
    nav: "resources",
    body: async (v, root) => {
      const row = v.rows.find((r) => r.id === id);
      const refused = refusedCommitOf(v);
      const unplanned = unplannedWhy(v.preview);
      return row === undefined
        ? undefined
        : resourcePage(row, await history.historyOf(id), {
            invocation: invocationOf(v.reconciler.configInForce.config),
            root,
            ...(refused === undefined ? {} : { refused }),
            ...(unplanned === undefined ? {} : { unplanned }),
          });
    },
  };
}

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: Buffer | string, etag?: string): void {
  const buf = typeof body === "string" ? Buffer.from(body) : body;
  res.writeHead(status, { "content-type": type, "content-length": buf.length, ...(etag === undefined ? {} : { etag }), ...securityHeaders });
  res.end(req.method === "HEAD" ? undefined : buf);
}

/**
 * A page, drawn from the shared snapshot of the state and the plan preview — once per snapshot,
 * preview and finished run, whatever the number of clients asking (page-cache.ts).
 */
async function renderPage(opts: StatusPageOptions, pages: RenderedPages, req: IncomingMessage, res: ServerResponse, page: Page, url: string): Promise<void> {
  const root = rootOf(new URL(url, "http://x").pathname);
  // a standby draws the leader's runs, read again when its copy is more than a moment old
  await opts.history.fresh();
  // the hold read once for the page: its banner and the promotion panel say the same
  const [state, preview, hold] = [await opts.state.read(), await opts.preview.get(), await opts.hold?.()];
  const promotion = await opts.promotion?.(hold);
  let rendered: Rendered;
  try {
    // read before drawing: the page then shows at least the runs up to `seq`, never fewer
    const seq = opts.history.live.seq;
    // the newest run as an object: a quiet run folded into it draws the page again too
    // the hold by its message: a new object at each look, the same page while it says the same
    rendered = await pages.get(url, [state, preview, seq, opts.history.newest(), promotion, hold?.message], async () => {
      const body = await page.body(viewOf(opts, state, preview, promotion, hold), root);
      const ctx: PageContext = {
        root,
        title: body === undefined ? "Not found" : page.title,
        nav: page.nav,
        seq,
        ...(opts.environments === undefined ? {} : { environments: opts.environments }),
      };
      const text = layout(ctx, body ?? html`<p>No such resource. <a href="${root}resources">All resources</a></p>`).text;
      return { status: body === undefined ? 404 : 200, body: Buffer.from(scrub(text)) };
    });
  } catch (err) {
    if (!(err instanceof TooBusy)) throw err;
    res.writeHead(503, { "retry-after": "1", "content-type": "text/plain; charset=utf-8", ...securityHeaders });
    res.end("busy drawing other pages; try again in a second\n");
    return;
  }
  send(req, res, rendered.status, "text/html; charset=utf-8", rendered.body, rendered.etag);
}

/** The live stream (server-sent events): a run's progress, at most every `liveIntervalMs`, and its end at once. */
function live(opts: StatusPageOptions, res: ServerResponse): void {
  if (opts.history.listenerCount >= (opts.maxListeners ?? 32)) {
    res.writeHead(503, { "retry-after": "10", "content-type": "text/plain", ...securityHeaders });
    res.end("too many live listeners");
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", connection: "keep-alive", ...securityHeaders });
  const interval = opts.liveIntervalMs ?? 250;
  let latest: LiveState = opts.history.live;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    timer = undefined;
    res.write(`data: ${scrub(JSON.stringify(latest))}\n\n`);
  };
  const unsubscribe = opts.history.subscribe((state) => {
    const finished = latest.running && !state.running;
    latest = state;
    if (finished) {
      clearTimeout(timer);
      flush();
    } else timer ??= setTimeout(flush, interval);
  });
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  res.write("retry: 2000\n\n");
  flush();
  res.on("close", () => {
    unsubscribe();
    clearInterval(heartbeat);
    clearTimeout(timer);
  });
}

export function statusPage(opts: StatusPageOptions): StatusPage {
  const pages = new RenderedPages(opts.maxRenders ?? 2);
  return {
    serve(req, res, ask) {
      const asset = assets[ask.page];
      if (asset !== undefined) return (send(req, res, 200, asset.type, asset.body), true);
      if (ask.page === "events") return (live(opts, res), true);
      const page = pageFor(ask, new URL(ask.url, "http://x").searchParams, opts.history);
      if (page === undefined) return false;
      renderPage(opts, pages, req, res, page, ask.url).catch((err: unknown) => {
        opts.onError?.(err);
        send(req, res, 500, "text/plain; charset=utf-8", "the page could not be drawn; see the daemon's log\n");
      });
      return true;
    },
  };
}
