/**
 * The data every page is drawn from, gathered once per request: the state, the daemon's own
 * view of its runs, and the preview of the next run. Rows of the resources table join the
 * state's records with what the next run plans for them.
 */
import type { Action, PlannedChange } from "../../plan/plan-change.js";
import type { ResourceRecord, StateSnapshot } from "../../record/state.js";
import type { Reconciler } from "../loop/reconciler.js";
import type { PlanPreview, Preview } from "../views/plan-preview.js";
import type { RunHistory } from "../history/run-history.js";
import type { PromotionPanel } from "../../promotion/promotion-status.js";
import type { Hold } from "../hold/hold.js";

export interface ResourceRow {
  readonly id: string;
  readonly kind: string;
  readonly name: string;
  /** applied, failed, in-doubt, blocked, orphaned, or pending (never applied yet). */
  readonly status: string;
  /** What the next run plans for it. */
  readonly next: Action | undefined;
  readonly health: "ok" | "failing" | undefined;
  /** Why its checks failed (the check, expected against got, the answer's excerpt), without its id. */
  readonly healthReason?: string;
  readonly commit: string | undefined;
  readonly updatedAt: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly record: ResourceRecord | undefined;
  readonly change: PlannedChange | undefined;
}

export interface View {
  readonly role: string;
  readonly source: string;
  readonly stateDescription: string;
  readonly reconciler: Reconciler;
  readonly history: RunHistory;
  readonly state: StateSnapshot;
  readonly preview: Preview;
  readonly rows: readonly ResourceRow[];
  /** An environment promoted from another: what is in force, the candidate, its gates (promotion-status.ts). */
  readonly promotion?: PromotionPanel;
  /** The freeze or closed sync window holding the environment now (hold.ts): a banner on its overview. */
  readonly hold?: Hold;
}

export interface ViewDeps {
  readonly reconciler: Reconciler;
  readonly history: RunHistory;
  readonly preview: PlanPreview;
  readonly state: { read(): Promise<StateSnapshot>; readonly description: string };
  readonly source: string;
  readonly role: () => string;
  /** An environment promoted from another: its promotion panel (one object per content), given the hold read for the page. */
  readonly promotion?: (hold: Hold | undefined) => Promise<PromotionPanel | undefined>;
  /** Its hold now, if any (every environment's, promoted or not). */
  readonly hold?: () => Promise<Hold | undefined>;
}

/** What waits for a person first (in doubt, failed), then what the next run cannot or will not do, then the record. */
function statusOf(record: ResourceRecord | undefined, change: PlannedChange | undefined): string {
  if (record?.status === "in-doubt" || record?.status === "failed") return record.status;
  if (change?.action === "blocked") return "blocked";
  if (change?.action === "orphan") return "orphaned";
  return record?.status ?? "pending";
}

/** Why a record's checks failed, its id left out (the row names it). */
function healthReasonOf(id: string, record: ResourceRecord | undefined): { healthReason?: string } {
  const reason = record?.health?.read().reason;
  if (reason === undefined) return {};
  return { healthReason: reason.startsWith(`${id}: `) ? reason.slice(id.length + 2) : reason };
}

function rowsOf(state: StateSnapshot, preview: Preview): ResourceRow[] {
  const changes = new Map(preview.kind === "plan" ? preview.run.plan.changes.map((c) => [c.id, c]) : []);
  const labels = new Map(preview.kind === "plan" ? preview.run.resources.map((r) => [`${r.kind}/${r.name}`, r.labels]) : []);
  const ids = [...new Set([...state.resources.keys(), ...changes.keys()])].sort();
  return ids.map((id) => {
    const record = state.resources.get(id);
    const change = changes.get(id);
    const slash = id.indexOf("/");
    return {
      id,
      kind: record?.kind ?? change?.kind ?? id.slice(0, slash),
      name: record?.name ?? change?.name ?? id.slice(slash + 1),
      status: statusOf(record, change),
      next: change?.action,
      health: record?.health === undefined ? undefined : record.health.read().ok ? "ok" : "failing",
      ...healthReasonOf(id, record),
      commit: record?.commit,
      updatedAt: record?.updatedAt,
      labels: labels.get(id) ?? {},
      record,
      change,
    };
  });
}

/** The view of a state snapshot and a preview already read. */
export function viewOf(deps: ViewDeps, state: StateSnapshot, preview: Preview, promotion?: PromotionPanel, hold?: Hold): View {
  return {
    role: deps.role(),
    source: deps.source,
    stateDescription: deps.state.description,
    reconciler: deps.reconciler,
    history: deps.history,
    state,
    preview,
    rows: rowsOf(state, preview),
    ...(promotion === undefined ? {} : { promotion }),
    ...(hold === undefined ? {} : { hold }),
  };
}

/** Counts of the overview, by row status. */
export function countByStatus(rows: readonly ResourceRow[]): Record<string, number> {
  const counts: Record<string, number> = { applied: 0, failed: 0, "in-doubt": 0, blocked: 0, orphaned: 0, pending: 0 };
  for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}
