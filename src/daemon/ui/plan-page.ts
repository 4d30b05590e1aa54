/** What the next run would do, laid out like the markdown plan: a summary table, then each change's details. */
import { fieldChanges } from "../../plan/plan-change.js";
import { summaryLine } from "../../plan/render/render.js";
import { diagnosticsList } from "./overview-page.js";
import { badge, html, shortCommit } from "./html.js";
import type { Html } from "./html.js";
import type { Preview } from "../views/plan-preview.js";
import { resourceHref } from "./resources-page.js";
import { breakingList, fieldList } from "./resource-page.js";

export function planPage(preview: Preview, root: string): Html {
  if (preview.kind === "none") return html`<p class="muted">The source has not been fetched yet.</p>`;
  if (preview.kind === "invalid")
    return html`<p class="error">The newest commit does not validate: the next run applies nothing.</p>${diagnosticsList(preview.diagnostics)}`;
  if (preview.kind === "error") return html`<p class="error">The plan could not be computed: ${preview.error}</p>`;
  const plan = preview.run.plan;
  const changes = plan.changes.filter((c) => c.action !== "no-op");
  return html`<p>Commit <code>${shortCommit(plan.commit)}</code> against state serial ${plan.state.serial}: <b data-plan-summary>${summaryLine(plan)}</b></p>
${
  changes.length === 0
    ? html`<p class="ok">Nothing to do: the servers match the repository as far as gatesync knows.</p>`
    : html`<table class="plan"><thead><tr><th>Action</th><th>Resource</th><th>Wave</th><th>Call</th></tr></thead><tbody>${changes.map(
        (c) =>
          html`<tr><td>${badge(c.action)}${(c.breaking?.length ?? 0) > 0 ? html` <span class="badge badge-breaking" data-breaking>⚠ breaking</span>` : ""}</td><td><a href="${root}${resourceHref(c)}">${c.id}</a></td><td>${c.wave}</td><td>${c.operation === undefined ? "—" : html`<code>${c.operation.method} ${c.operation.path}${c.operation.query}</code>${c.operation.batchable ? " (batch)" : ""}`}</td></tr>`,
      )}</tbody></table>
${changes.map(
  (c) =>
    html`<details class="change"><summary>${badge(c.action)} ${c.id}</summary>${c.reason === undefined ? "" : html`<p>${c.reason}</p>`}${c.hint === undefined ? "" : html`<p class="hint">${c.hint}</p>`}${breakingList(c)}${fieldList(fieldChanges(c))}</details>`,
)}`
}`;
}
