/** What every plan rendering shares: symbols, the breaking marker, values, the summary lines. */
import { interfaceNames } from "../../contract/interfaces.js";
import { operations } from "../../contract/operations.js";
import type { Compatibility } from "../../kinds/breaking/types.js";
import type { Plan } from "../plan.js";
import type { Action, PlannedChange } from "../plan-change.js";
import { isDocumentRef } from "../../kinds/document-ref.js";
import { isSensitiveMarker } from "../../secrets/markers.js";

export const symbol: Record<Action, string> = { create: "+", update: "~", "no-op": "=", blocked: "!", orphan: "-", adopt: "@", moved: "~" };

export const breakingMark = "⚠ breaking";

/** Breaking changes listed at the top of a resource's details; the rest are counted. */
export const breakingShown = 10;

const hideMarker = (_k: string, v: unknown): unknown => (isSensitiveMarker(v) ? "(sensitive)" : v);

/** One value, short: JSON, sensitive values hidden, long ones cut. */
export function showValue(value: unknown, max = 160): string {
  if (value === undefined) return "(unknown)";
  if (isSensitiveMarker(value)) return "(sensitive)";
  // a document held by reference is named, not read: its file is what a reader looks at
  if (isDocumentRef(value)) return `(the document in ${value.file})`;
  // a replacer costs a call per member: a scalar (most fields) holds no marker to replace
  const text = (typeof value !== "object" || value === null ? JSON.stringify(value) : JSON.stringify(value, hideMarker)) ?? typeof value;
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

export function callText(c: PlannedChange): string {
  if (c.operation === undefined) return "";
  const tags = [
    c.operation.batchable ? "batch" : "",
    c.quotaReset === true ? "quota reset" : "",
    c.deactivate === true ? "deactivate" : "",
    c.reactivate === true ? "reactivate" : "",
  ].filter((t) => t !== "");
  return `${c.operation.method} ${c.operation.path}${c.operation.query}${tags.length > 0 ? ` [${tags.join(", ")}]` : ""}`;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** "2 non-breaking, 1 annotation only": the classified changes other than the breaking ones. */
export function otherClasses(c: Compatibility): string {
  const count = (k: string): number => c.changes.filter((x) => x.class === k).length;
  const parts = [
    count("non-breaking") > 0 ? `${count("non-breaking")} non-breaking` : "",
    count("annotation") > 0 ? `${count("annotation")} annotation only` : "",
    count("unclassified") > 0 ? `${count("unclassified")} unclassified (review by hand)` : "",
  ].filter((p) => p !== "");
  return parts.join(", ");
}

export function summaryLine(plan: Plan): string {
  const s = plan.summary;
  const parts = [
    `${s.create} to create`,
    `${s.update} to update${s.breaking > 0 ? ` (${s.breaking} ${breakingMark})` : ""}`,
    ...((s.adopt ?? 0) > 0 ? [`${s.adopt} to adopt`] : []),
    ...((s.moved ?? 0) > 0 ? [`${s.moved} moved`] : []),
    ...((s.reactivate ?? 0) > 0 ? [`${s.reactivate} to reactivate`] : []),
    `${s.blocked} blocked`,
    `${s.orphan} orphaned${s.deactivate > 0 ? ` (${s.deactivate} to deactivate)` : ""}`,
    `${s.noop} unchanged`,
  ];
  if (s.quotaResets > 0) parts.push(plural(s.quotaResets, "quota reset"));
  return parts.join(", ");
}

export function callsLine(plan: Plan): string {
  const c = plan.summary.calls;
  const per = interfaceNames().map((i) => `${i} ${c[i]}`);
  const batch = c.batchCalls > 0 ? `, ${plural(c.batchCalls, "batch call")} carrying ${plural(c.batched, `${operations.batch.interface} change`)}` : "";
  return `${plural(c.total, "HTTP call")} (${per.join(", ")}${batch})`;
}

/** Where the plan's state came from, for the header: `state serial N, SOURCE`. */
export function stateLine(plan: Plan): string {
  return `state serial ${plan.state.serial}${plan.state.source === undefined ? "" : `, ${plan.state.source}`}`;
}

/** Said loudly when the state is empty: the plan shows everything as a create. */
export function emptyStateWarning(plan: Plan): string | undefined {
  if (plan.state.empty !== true) return undefined;
  return "The state is empty (never written, or absent as in a fresh clone): every resource is planned as a create. If a daemon applies this repository, plan against its state (--state-url, or --state postgres:VAR/schema): see docs/user/merge-requests.md.";
}

/** The plan's warning when the guard against mass deactivation withheld its deactivations. */
export function massDeactivationLine(plan: Plan): string | undefined {
  const m = plan.massDeactivation;
  if (m === undefined) return undefined;
  return `Mass deactivation withheld: this plan would switch off ${m.withheld} of the ${m.of} API definitions and org keys gatesync applied (the guard allows ${Math.round(m.maxShare * 100)}%, never all): none is switched off. If it is meant, --allow-mass-deactivation (plan, apply, run --once) or deactivationGuard.allowCommit in gatesync.yaml (the daemon).`;
}

/** "from Kind/old" for a rename: what the change's first line says after its action. */
export function movedText(c: PlannedChange): string {
  if (c.moved === undefined) return "";
  return `from ${c.moved.from}${c.moved.returned === true ? " (back to an earlier name: same object)" : c.moved.declared ? "" : " (detected: same object)"}`;
}

/** Where a resource refused for another owner is declared (`  config/acme.yaml:1`), else "". */
export const refusedAt = (c: PlannedChange): string =>
  c.action === "blocked" && c.ownedBy !== undefined && c.source !== undefined ? `  ${c.source.file}:${c.source.line}` : "";
