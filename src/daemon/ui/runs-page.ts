/** The last runs: commit, trigger, duration, calls per interface and batch calls; refused or failed runs with their errors. */
import { diagnosticsList } from "./overview-page.js";
import { badge, formatDuration, html, shortCommit } from "./html.js";
import type { Html } from "./html.js";
import type { RunEntry } from "../history/run-record.js";
import { interfaceNames, managementInterfaces } from "../../contract/interfaces.js";
import type { CallCounts } from "../../plan/plan.js";

/** Each interface's direct calls, in the registry's order: `3 / 0 / 1 / 0`. */
function perInterfaceCalls(c: CallCounts): string {
  return interfaceNames()
    .map((i) => c[i])
    .join(" / ");
}

function detail(e: RunEntry): Html {
  const r = e.record.report;
  const s = r.summary;
  const parts: Html[] = [];
  if (r.error !== undefined) parts.push(html`<p class="error">${r.error}</p>`);
  if (r.diagnostics !== undefined) parts.push(diagnosticsList(r.diagnostics));
  if (s !== undefined && s.failed.length > 0) parts.push(html`<h4>Failed</h4><ul>${s.failed.map((f) => html`<li>${f.id}: ${f.message}</li>`)}</ul>`);
  if (s !== undefined && s.inDoubt.length > 0) parts.push(html`<h4>In doubt</h4><ul>${s.inDoubt.map((f) => html`<li>${f.id}: ${f.message}</li>`)}</ul>`);
  const changes = e.record.changes;
  if (changes.length > 0)
    parts.push(html`<h4>Changes</h4><ul>${changes.map((c) => html`<li>${c.action} ${c.id}</li>`)}${moreThan(e.record.counts.changes, changes.length)}</ul>`);
  return parts.length === 0
    ? html``
    : html`<tr class="run-detail"><td colspan="9"><details${r.result === "invalid" || r.result === "error" || r.result === "partial" ? html` open` : ""}><summary>details</summary>${parts}</details></td></tr>`;
}

/** Lists of a run are kept cut (run-record.ts): said where they are. */
const moreThan = (all: number, shown: number): Html | string => (all > shown ? html`<li class="muted">… and ${all - shown} more</li>` : "");

/** The commit, its subject and author (a git source's), and the replica that ran it. */
function commitCell(e: RunEntry): Html {
  const r = e.record;
  const words = r.subject === undefined ? "" : html`<br><span class="subject">${r.subject}</span>`;
  const by = r.author === undefined ? "" : html` <span class="muted">by ${r.author}</span>`;
  return html`<code>${shortCommit(r.commit ?? r.revision)}</code>${words}${by}<br><span class="muted">on ${r.replica}</span>`;
}

/** The runs page of the history's newest rows, read whole from the state (undefined: they could not be read). */
export function runsPage(entries: readonly RunEntry[] | undefined): Html {
  if (entries === undefined) return html`<p class="error">The history could not be read from the state: the daemon's log says why.</p>`;
  if (entries.length === 0) return html`<p class="muted">No run has finished yet.</p>`;
  return html`<table class="runs">
<thead><tr><th>#</th><th>Started</th><th>Trigger</th><th>Result</th><th>Commit</th><th>Duration</th><th>Calls (${managementInterfaces.map((i) => i.title).join(" / ")})</th><th>Batch calls (changes)</th><th>Repeats</th></tr></thead>
<tbody>${entries.map((e) => {
    const r = e.record.report;
    const c = r.summary?.calls;
    return html`<tr id="run-${e.seq}" data-result="${r.result}"><td>${e.seq}</td><td>${e.firstAt}</td><td>${r.reason}</td><td>${badge(r.result)}</td><td>${commitCell(e)}</td><td>${formatDuration(r.durationMs)}</td><td>${c === undefined ? "—" : perInterfaceCalls(c)}</td><td>${c === undefined ? "—" : `${c.batchCalls} (${c.batched})`}</td><td>${e.repeats === 0 ? "" : `×${e.repeats + 1} until ${e.lastAt}`}</td></tr>${detail(e)}`;
  })}</tbody>
</table>`;
}
