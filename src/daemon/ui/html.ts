/**
 * HTML for the status page: a tagged template that scrubs (the redaction layer) and escapes
 * every interpolated value unless it is already `Html`, and the page layout. No inline script or style anywhere: the page runs
 * under a Content-Security-Policy that allows only the daemon's own script and stylesheet.
 */

import { scrubText } from "../../secrets/redaction.js";

/** A fragment that is already safe HTML. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(value: string): string {
  return value.replaceAll(/[&<>"']/g, (c) => entities[c]!);
}

type Part = Html | string | number | boolean | undefined | null | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return "";
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join("");
  // the redaction layer sees every value before it is escaped (escaping would hide its forms)
  return escapeHtml(scrubText(String(part)));
}

/** `html\`<p>${value}</p>\`` with `value` escaped. */
export function html(strings: TemplateStringsArray, ...values: readonly Part[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => (out += render(v) + strings[i + 1]!));
  return new Html(out);
}

/** The relative way back to the page root from a path (the page works behind a path prefix). */
export function rootOf(pathname: string): string {
  const depth = pathname.split("/").length - 2;
  return depth <= 0 ? "./" : "../".repeat(depth);
}

export interface PageContext {
  /** Relative prefix to the page root (`./`, `../`, …). */
  readonly root: string;
  readonly title: string;
  readonly nav: "overview" | "resources" | "runs" | "plan";
  /** The run-history sequence number the page was drawn at: the live script refreshes when the stream's differs. */
  readonly seq: number;
  /** With environments: the one this page shows and all of them (the switcher links to each one's page). */
  readonly environments?: EnvironmentSwitch;
}

export interface EnvironmentSwitch {
  readonly current: string;
  readonly names: readonly string[];
}

/** Links to the same kind of page of every environment (each is served below `/environments/NAME/`). */
function switcher(ctx: PageContext): Html | string {
  const envs = ctx.environments;
  if (envs === undefined) return "";
  const links = envs.names.map(
    (name) => html`<a href="${ctx.root}../${encodeURIComponent(name)}/" ${name === envs.current ? new Html(' aria-current="page"') : ""}>${name}</a>`,
  );
  return html`<nav class="environments" aria-label="Environments"><span>environment</span> ${links}</nav>`;
}

const navItems: ReadonlyArray<[PageContext["nav"], string, string]> = [
  ["overview", "Overview", ""],
  ["resources", "Resources", "resources"],
  ["runs", "Runs", "runs"],
  ["plan", "Plan", "plan"],
];

export function layout(ctx: PageContext, body: Html): Html {
  const nav = navItems.map(
    ([key, label, href]) => html`<a href="${ctx.root}${href === "" ? "." : href}"${key === ctx.nav ? new Html(' aria-current="page"') : ""}>${label}</a>`,
  );
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${ctx.title}${ctx.environments === undefined ? "" : ` · ${ctx.environments.current}`} · gatesync</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ctx.root}ui/app.css">
<script src="${ctx.root}ui/app.js" defer></script>
</head>
<body data-root="${ctx.root}" data-seq="${String(ctx.seq)}">
<header><span class="brand">gatesync</span><nav>${nav}</nav>${switcher(ctx)}<span id="live" class="live" hidden><progress id="live-progress" max="1" value="0"></progress> <span id="live-text"></span></span></header>
<main id="main">
<h1>${ctx.title}</h1>
${body}
</main>
<footer>Read-only status page of the gatesync daemon · <a href="${ctx.root}status">/status (JSON)</a> · <a href="${ctx.root}metrics">/metrics</a></footer>
</body>
</html>
`;
}

/** A status word as a badge. */
export function badge(status: string): Html {
  return html`<span class="badge badge-${status.replaceAll(/[^a-z-]/g, "")}">${status}</span>`;
}

/** A definition list from pairs. */
export function facts(pairs: ReadonlyArray<readonly [string, Part]>): Html {
  return html`<dl class="facts">${pairs.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

export function shortCommit(commit: string | null | undefined): string {
  if (commit === null || commit === undefined) return "—";
  return /^[0-9a-f]{40}$/.test(commit) ? commit.slice(0, 10) : commit;
}

/** `1 call`, `2 calls`. */
export function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? "" : "s"}`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
