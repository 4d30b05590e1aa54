/**
 * One resource: its record, what the next run plans for it, the last applied request (secrets
 * as (sensitive)), the server's last answer (redacted and capped), its changes by commit, and
 * for what waits for a person the exact command that settles it.
 */
import type { FieldChange } from "../../plan/diff.js";
import { inDoubtSteps } from "../../plan/in-doubt.js";
import { fieldChanges } from "../../plan/plan-change.js";
import type { PlannedChange } from "../../plan/plan-change.js";
import { showValue } from "../../plan/render/render.js";
import { isSensitiveMarker } from "../../secrets/markers.js";
import { commandFor } from "../../printed-commands.js";
import type { Invocation } from "../../printed-commands.js";
import { badge, facts, html, shortCommit } from "./html.js";
import type { Html } from "./html.js";
import type { ResourceHistoryItem } from "../history/run-history.js";
import type { ResourceRow } from "./view.js";
import { refusedNotice } from "./refused-commit.js";
import type { RefusedCommit } from "./refused-commit.js";

/** Shown at most of a stored value. */
export const maxShownChars = 16 * 1024;

export function pretty(value: unknown): string {
  const text = JSON.stringify(value, (_k, v: unknown) => (isSensitiveMarker(v) ? "(sensitive)" : v), 2) ?? "(nothing)";
  return text.length > maxShownChars ? `${text.slice(0, maxShownChars)}\n… (${text.length - maxShownChars} more characters not shown)` : text;
}

/** A recorded health as the page shows it: its verdict, when it was checked, and why it failed. */
const healthCell = (health: { readonly ok: boolean; readonly checkedAt: string; readonly reason?: string }): Html =>
  html`${badge(health.ok ? "ok" : "failing")} checked ${health.checkedAt}${health.reason === undefined ? "" : html`<div class="health-reason" data-health-reason>${health.reason}</div>`}`;

/** The commands a person runs to settle a resource, or none; each completed for the daemon's config and environment (`inv`). */
export function settleCommands(row: ResourceRow, inv: Invocation = {}): string[] {
  return settleSteps(row).map(([command, why]) => `${commandFor(command, inv)}   # ${why}`);
}

function settleSteps(row: ResourceRow): Array<readonly [string, string]> {
  if (row.record?.status === "in-doubt") {
    // the plan's own steps for this kind (an org key in doubt needs none: the next run writes it again, its reset never)
    return inDoubtSteps(row.record.kind, row.id, row.status === "orphaned" ? "orphan" : "declared").map((st) => [st.command, st.when] as const);
  }
  if (row.status === "blocked") {
    // a plan whose hint names other steps (a rename to declare, a mass deactivation withheld) is followed, not --accept
    const hint = row.change?.hint;
    if (hint !== undefined && !hint.includes("--accept")) return [...hint.matchAll(/`(gatesync [^`]+)`/g)].map((m) => [m[1]!, "see “what to do”"] as const);
    return [[`gatesync state resolve ${row.id} --accept`, "after making the change by hand: record the repository's spec as applied"]];
  }
  if (row.status === "orphaned") return [[`gatesync state resolve ${row.id} --forget`, "stop tracking it (the object stays on the server)"]];
  return [];
}

/** The breaking changes of a planned update, each with its path and reason (merge-request review's classification). */
export function breakingList(c: PlannedChange): Html {
  const items = c.breaking ?? [];
  if (items.length === 0) return html``;
  return html`<div class="breaking"><b>⚠ breaking</b><ul>${items.map((b) => html`<li><code>${b.path}</code>: ${b.reason}</li>`)}</ul></div>`;
}

/** Field changes, old → new, sensitive values as (sensitive). */
export function fieldList(fields: readonly FieldChange[]): Html {
  if (fields.length === 0) return html``;
  return html`<ul class="fields">${fields.map((f) => html`<li class="field-${f.op}"><code>${f.path}</code>: ${f.op === "add" ? html`+ ${showValue(f.after)}` : f.op === "remove" ? html`− ${showValue(f.before)}` : html`${showValue(f.before)} → ${showValue(f.after)}`}</li>`)}</ul>`;
}

/** What the page knows beyond the row: the daemon's invocation, the commit refused (if the newest is), the pages' root. */
export interface ResourcePageContext {
  readonly invocation?: Invocation;
  readonly refused?: RefusedCommit;
  /** Why the next run has no plan (the source not fetched yet, a plan that failed): then nothing is said of the repository. */
  readonly unplanned?: string;
  readonly root?: string;
}

function changeSection(row: ResourceRow, page: ResourcePageContext): Html {
  const c = row.change;
  // a refused commit is not planned: the resource is as the last good commit left it, not gone
  if (page.refused !== undefined) return refusedNotice(page.refused, page.root ?? "../../");
  if (page.unplanned !== undefined) return html`<p class="muted">${page.unplanned}</p>`;
  if (c === undefined) return html`<p class="muted">Not in the repository any more.</p>`;
  return html`${facts([
    ["action", badge(c.action)],
    ...(c.operation === undefined
      ? []
      : ([["call", html`<code>${c.operation.method} ${c.operation.path}${c.operation.query}</code>${c.operation.batchable ? " (batch)" : ""}`]] as const)),
    ...(c.reason === undefined ? [] : ([["why", c.reason]] as const)),
    ...(c.hint === undefined ? [] : ([["what to do", c.hint]] as const)),
    ...(c.source === undefined ? [] : ([["file", `${c.source.file}:${c.source.line}`]] as const)),
  ])}${fieldList(fieldChanges(c))}`;
}

function historySection(items: readonly ResourceHistoryItem[] | undefined, row: ResourceRow): Html {
  if (items === undefined) return html`<p class="error">The history could not be read from the state: the daemon's log says why.</p>`;
  const recorded =
    row.record === undefined
      ? []
      : [html`<li>last recorded: ${badge(row.record.status)} at ${row.record.updatedAt}, commit <code>${shortCommit(row.record.commit)}</code></li>`];
  return html`<ol class="history">${items.map(
    (h) =>
      html`<li>run <a href="../../runs#run-${h.seq}">#${h.seq}</a> · ${h.at} · commit <code>${shortCommit(h.commit)}</code> · ${h.action} → ${badge(h.outcome)}</li>`,
  )}${recorded}</ol>${items.length === 0 ? html`<p class="muted">No change of it in the last runs the history lists.</p>` : ""}`;
}

export function resourcePage(row: ResourceRow, history: readonly ResourceHistoryItem[] | undefined, page: ResourcePageContext = {}): Html {
  const rec = row.record;
  const commands = settleCommands(row, page.invocation);
  return html`${
    commands.length === 0
      ? ""
      : html`<section class="settle"><h2>Waiting for a person</h2>${rec?.error === undefined ? "" : html`<p>${rec.error}</p>`}<pre class="commands" data-resolve>${commands.join("\n")}</pre></section>`
  }
<section><h2>Record</h2>${
    rec === undefined
      ? html`<p class="muted">Nothing recorded yet: it has not been applied.</p>`
      : facts([
          ["status", badge(row.status)],
          ["server id", rec.serverId ?? "—"],
          [
            "address",
            Object.entries(rec.address)
              .map(([k, v]) => `${k}=${v}`)
              .join(", ") || "—",
          ],
          ["commit", html`<code>${shortCommit(rec.commit)}</code>`],
          ["created", rec.createdAt],
          ["updated", rec.updatedAt],
          ["health", rec.health === undefined ? "—" : healthCell(rec.health.read())],
          ...(rec.error === undefined ? [] : ([["last error", rec.error]] as const)),
        ])
  }</section>
<section><h2>Next run</h2>${changeSection(row, page)}</section>
<section><h2>Last applied request</h2><pre class="json">${rec?.applied === undefined ? "(none)" : pretty(rec.applied.read())}</pre>${rec?.attempted === undefined ? "" : html`<h3>Sent, outcome unknown</h3><pre class="json">${pretty(rec.attempted.read())}</pre>`}</section>
<section><h2>Server's last answer</h2><pre class="json">${rec?.response === undefined ? "(none)" : pretty(rec.response.read())}</pre></section>
<section><h2>History</h2>${historySection(history, row)}</section>`;
}
