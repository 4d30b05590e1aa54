/** The overview: commit in force, role, the last run, counts by status, health, the next run. */
import { formatPosition } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import { allKinds } from "../../kinds/registry.js";
import { runChart } from "./chart.js";
import { badge, facts, formatDuration, html, shortCommit } from "./html.js";
import type { Html } from "./html.js";
import { countByStatus } from "./view.js";
import type { View } from "./view.js";

/** The errors of a list of findings (all of them with `all`: the governance rules' warnings of an applied run). */
export function diagnosticsList(diagnostics: readonly Diagnostic[], all = false): Html {
  const errors = all ? diagnostics : diagnostics.filter((d) => d.severity === "error");
  return html`<ul class="diagnostics">${errors.map(
    (d) =>
      html`<li>${all ? html`<span class="severity">${d.severity}</span> ` : ""}<code class="where">${formatPosition(d) || "(no file)"}</code> <span class="code">${d.rule === undefined ? d.code : `${d.code} ${d.rule}`}</span> ${d.resource === undefined ? "" : html`<b>${d.resource}</b> `}${d.path === undefined ? "" : html`<code>${d.path}</code>: `}${d.message}${d.hint === undefined ? "" : html`<br><span class="hint">hint: ${d.hint}</span>`}</li>`,
  )}</ul>`;
}

function lastRunFacts(view: View): Html {
  const newest = view.history.newest();
  if (newest === undefined) return html`<p class="muted">No run has finished yet.</p>`;
  const last = newest.record;
  return facts([
    ["result", badge(last.outcome)],
    ["trigger", last.trigger],
    ["started", last.startedAt],
    ["duration", formatDuration(last.durationMs)],
    ["commit", shortCommit(last.commit ?? last.revision)],
    ...(last.subject === undefined ? [] : ([["subject", last.subject]] as const)),
    ...(last.author === undefined ? [] : ([["author", last.author]] as const)),
    ["run by", last.replica],
    ...(last.report.error === undefined ? [] : ([["error", last.report.error]] as const)),
  ]);
}

/** The kinds whose resources have a health: those with post-apply checks. */
function checkedKinds(): string {
  return allKinds()
    .filter((k) => k.postApply !== undefined)
    .map((k) => k.kind)
    .join(" or ");
}

/** Never "yes" under a branch head that is not applied: the head is what "synced" is about. */
function syncedText(synced: boolean, headPending: boolean, running: boolean): string {
  if (headPending) return running ? "no: the branch head is being applied" : "no: the branch head is not applied";
  return synced ? "yes: the newest commit is applied in full" : "no";
}

/** An environment promoted from another: the revision in force, the candidate and its gates, the commands. */
function promotionSection(view: View): Html | string {
  const p = view.promotion;
  if (p === undefined) return "";
  const inForce = p.inForce;
  return html`<section class="promotion"><h2>Promotion from ${p.from}</h2>${facts([
    [
      "revision in force",
      inForce === undefined
        ? "none yet: nothing is applied before the first promotion"
        : html`<code>${shortCommit(inForce.revision)}</code> ${inForce.rollback ? "rolled back to" : "promoted"} ${inForce.at} (${inForce.by})${inForce.rollback ? html` <span class="warn">stays until the next promotion</span>` : ""}`,
    ],
    [
      "candidate",
      p.candidate === undefined
        ? `none: ${p.from} has verified no revision yet`
        : html`<code>${shortCommit(p.candidate.revision)}</code> verified in ${p.from} ${p.candidate.at} (applied, checks healthy, soaked)`,
    ],
    ...(p.pending === undefined ? [] : ([["on its way", html`<code>${shortCommit(p.pending.revision)}</code>: ${p.pending.gate}`]] as const)),
    ...(p.withdrawn === undefined
      ? []
      : ([
          [
            "withdrawn",
            html`<code>${shortCommit(p.withdrawn.revision)}</code> <span class="warn" data-withdrawn>no longer a candidate</span>: a later run in ${p.from} failed ${p.withdrawn.at}: ${p.withdrawn.reason}`,
          ],
        ] as const)),
    ["approval", p.mode === "auto" ? "promotion: auto (the daemon promotes each candidate)" : "promotion: manual (a person runs gatesync promote)"],
    ...(p.held === undefined ? [] : ([["held", html`<span class="warn">${p.held.message}</span>: it plans but applies and promotes nothing`]] as const)),
  ])}${p.commands.length === 0 ? "" : html`<pre class="commands">${p.commands.join("\n")}</pre>`}</section>`;
}

/** Any held environment's banner, above the rest: what is held, and that its runs plan but send nothing. */
function holdBanner(view: View): Html | string {
  const hold = view.hold;
  if (hold === undefined) return "";
  return html`<section class="held" data-held="${hold.kind}"><p>⏸ <span class="warn">${hold.message}</span>: it plans but applies and promotes nothing while it lasts${hold.kind === "freeze" ? " (gatesync unfreeze lifts it)" : " (the daemon applies what waited when the window lets it)"}</p></section>`;
}

export function overviewPage(view: View): Html {
  const r = view.reconciler;
  const success = view.history.lastSuccess();
  const inForce = success?.commit ?? success?.revision;
  const head = r.lastSnapshot?.commit ?? r.lastSnapshot?.revision;
  const counts = countByStatus(view.rows);
  const healthRows = view.rows.filter((x) => x.health !== undefined);
  const failing = healthRows.filter((x) => x.health === "failing");
  const last = view.history.newest()?.record.report;
  const cards = (["applied", "failed", "in-doubt", "blocked", "orphaned", "pending"] as const).map(
    (s) =>
      html`<a class="card card-${s}" href="resources?status=${s}" data-count="${s}"><span class="n">${counts[s] ?? 0}</span><span class="what">${s}</span></a>`,
  );
  return html`${holdBanner(view)}<section class="summary">
${facts([
  ["commit in force", html`<code>${shortCommit(inForce)}</code>`],
  ...(head !== undefined && head !== inForce
    ? ([["branch head", html`<code>${shortCommit(head)}</code> <span class="warn">not applied yet</span>`]] as const)
    : []),
  ["synced", syncedText(view.history.synced, head !== undefined && head !== inForce, view.history.live.running)],
  ["role", view.role],
  ["source", view.source],
  ["state", `${view.stateDescription} (serial ${view.state.serial})`],
  ["next scheduled run", r.nextRunAt ?? (view.history.live.running ? "running now" : "—")],
])}
</section>
${promotionSection(view)}
<section><h2>Resources</h2><div class="cards">${cards}</div></section>
<section><h2>Health of the API checks</h2>${
    healthRows.length === 0
      ? html`<p class="muted">No ${checkedKinds()} has post-apply checks.</p>`
      : html`<p><span data-health-ok>${healthRows.length - failing.length}</span> of ${healthRows.length} healthy.</p>${failing.length === 0 ? "" : html`<ul>${failing.map((f) => html`<li><a href="resources/${f.kind}/${encodeURIComponent(f.name)}">${f.id}</a> failing${f.healthReason === undefined ? "" : html`: <span data-health-reason>${f.healthReason}</span>`}</li>`)}</ul>`}`
  }</section>
<section><h2>Last run</h2>${lastRunFacts(view)}${last?.diagnostics === undefined ? "" : html`<h3>Why the commit was refused</h3>${diagnosticsList(last.diagnostics)}`}${
    last?.ruleFindings === undefined
      ? ""
      : html`<h3>Rules: ${last.ruleFindings.length} finding(s) that do not stop the commit</h3>${diagnosticsList(last.ruleFindings, true)}`
  }${
    last?.ignoredSettings === undefined
      ? ""
      : html`<h3>Settings of the repository's gatesync.yaml the daemon ignores</h3>${diagnosticsList(last.ignoredSettings, true)}`
  }</section>
<section><h2>Runs over time</h2>${runChart(view.history.entries())}</section>`;
}
