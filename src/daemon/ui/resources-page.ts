/**
 * The resources table: every resource of the state and of the repository, filterable by kind,
 * status, label and text (a GET form, so it works without script; the script filters and
 * sorts in place as you type).
 */
import { badge, html, shortCommit } from "./html.js";
import type { Html } from "./html.js";
import type { ResourceRow } from "./view.js";
import { refusedNotice } from "./refused-commit.js";
import type { RefusedCommit } from "./refused-commit.js";

export interface ResourceFilter {
  readonly kind?: string;
  readonly status?: string;
  /** `key=value` or `key`. */
  readonly label?: string;
  readonly q?: string;
}

export function filterFrom(params: URLSearchParams): ResourceFilter {
  const get = (k: string): string | undefined => {
    const v = params.get(k)?.trim();
    return v === undefined || v === "" ? undefined : v.slice(0, 200);
  };
  const f: Record<string, string> = {};
  for (const k of ["kind", "status", "label", "q"]) {
    const v = get(k);
    if (v !== undefined) f[k] = v;
  }
  return f;
}

export function labelText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
}

export function matches(row: ResourceRow, f: ResourceFilter): boolean {
  if (f.kind !== undefined && row.kind !== f.kind) return false;
  if (f.status !== undefined && row.status !== f.status) return false;
  if (f.label !== undefined) {
    const [k, v] = f.label.split("=", 2) as [string, string | undefined];
    if (!(k in row.labels) || (v !== undefined && row.labels[k] !== v)) return false;
  }
  if (f.q !== undefined && !`${row.id} ${labelText(row.labels)}`.toLowerCase().includes(f.q.toLowerCase())) return false;
  return true;
}

function options(values: readonly string[], selected: string | undefined, any: string): Html {
  return html`<option value="">${any}</option>${values.map((v) => html`<option value="${v}"${v === selected ? html` selected` : ""}>${v}</option>`)}`;
}

export function resourceHref(row: { kind: string; name: string }): string {
  return `resources/${encodeURIComponent(row.kind)}/${encodeURIComponent(row.name)}`;
}

/** `refused`: the newest commit is refused, and the rows are the last good commit's (refused-commit.ts). */
export function resourcesPage(rows: readonly ResourceRow[], f: ResourceFilter, root: string, refused?: RefusedCommit): Html {
  const kinds = [...new Set(rows.map((r) => r.kind))].sort();
  const statuses = [...new Set(rows.map((r) => r.status))].sort();
  const shown = rows.filter((r) => matches(r, f));
  return html`${refused === undefined ? "" : refusedNotice(refused, root)}<form class="filters" method="get" action="${root}resources" role="search">
<label>Kind <select name="kind" data-filter="kind">${options(kinds, f.kind, "any kind")}</select></label>
<label>Status <select name="status" data-filter="status">${options(statuses, f.status, "any status")}</select></label>
<label>Label <input name="label" data-filter="label" placeholder="team=storefront" value="${f.label ?? ""}"></label>
<label>Text <input name="q" type="search" data-filter="q" placeholder="name, id or label" value="${f.q ?? ""}"></label>
<button type="submit">Filter</button>
</form>
<p class="muted"><span id="shown-count">${shown.length}</span> of ${rows.length} resources.</p>
<table class="resources sortable">
<thead><tr><th data-sort="kind">Kind</th><th data-sort="name">Name</th><th data-sort="status">Status</th><th data-sort="next">Next run</th><th data-sort="health">Health</th><th data-sort="commit">Last applied commit</th><th data-sort="updated">Updated</th><th>Labels</th></tr></thead>
<tbody>${shown.map(
    (
      r,
    ) => html`<tr data-kind="${r.kind}" data-status="${r.status}" data-labels="${labelText(r.labels)}" data-text="${`${r.id} ${labelText(r.labels)}`.toLowerCase()}">
<td>${r.kind}</td><td><a href="${root}${resourceHref(r)}">${r.name}</a></td><td>${badge(r.status)}</td><td>${r.next ?? "—"}</td><td>${r.health === undefined ? "—" : badge(r.health)}</td><td><code>${shortCommit(r.commit)}</code></td><td>${r.updatedAt ?? "—"}</td><td>${Object.entries(r.labels).map(([k, v]) => html`<span class="label">${k}=${v}</span> `)}</td></tr>`,
  )}</tbody>
</table>`;
}
