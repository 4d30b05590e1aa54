import type { ResourceStatus, StateSnapshot } from "../record/state.js";
import { scrubText } from "../secrets/redaction.js";
import type { Paint } from "../text/style.js";
import type { ApplySummary } from "./types.js";
import { inDoubtSteps } from "../plan/in-doubt.js";
import { commandFor, withInvocation } from "../printed-commands.js";
import type { Invocation } from "../printed-commands.js";
import { interfaceNames } from "../contract/interfaces.js";
import type { InterfaceName } from "../contract/interfaces.js";
import { operations } from "../contract/operations.js";
import type { AppliedCalls } from "./types.js";

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Exit status of an apply: 0 when everything applied, 1 when anything failed or is in doubt. */
export function applySucceeded(s: ApplySummary): boolean {
  return s.failed.length === 0 && s.inDoubt.length === 0 && s.skipped.length === 0 && s.stateFailure === undefined;
}

/** Records by status once an apply is recorded: the state it started from, with its outcomes. */
export function statusCounts(before: StateSnapshot, s: ApplySummary): Record<ResourceStatus, number> {
  const status = new Map<string, ResourceStatus>([...before.resources].map(([id, r]) => [id, r.status]));
  for (const id of s.applied) status.set(id, "applied");
  for (const f of s.failed) status.set(f.id, "failed");
  for (const f of s.inDoubt) status.set(f.id, "in-doubt");
  const counts: Record<ResourceStatus, number> = { applied: 0, failed: 0, "in-doubt": 0 };
  for (const v of status.values()) counts[v] += 1;
  return counts;
}

/** What settles one resource in doubt (the same steps the plan gives), one line each. */
function inDoubtLines(id: string, inv: Invocation): string {
  const steps = inDoubtSteps(id.slice(0, id.indexOf("/")), id, "declared");
  if (steps.length === 0) {
    return withInvocation("\n    nothing to resolve: the next apply writes it again, without repeating what must happen once (see `gatesync plan`)", inv);
  }
  return steps.map((st) => `\n    ${commandFor(st.command, inv)}   (${st.when})`).join("");
}

/** Every request sent to one interface; the batch route's interface counts its batch calls and the checks' too. */
function interfaceCalls(c: AppliedCalls, iface: InterfaceName): string {
  if (iface !== operations.batch.interface) return `${iface} ${c[iface]}`;
  const carried = c.batchCalls > 0 ? ` (${plural(c.batchCalls, "batch call")} carrying ${plural(c.batched, "change")})` : "";
  return `${iface} ${c[iface] + c.batchCalls + c.checks}${carried}`;
}

function retriesAndPauses(c: AppliedCalls): string {
  return `${c.retries} retr${c.retries === 1 ? "y" : "ies"}, ${plural(c.pauses, "pause")} for Retry-After`;
}

/** The apply summary for people (its commands completed by `inv`); it passes through the redaction layer on its way out. */
export function renderSummary(s: ApplySummary, paint: Paint, inv: Invocation = {}): string {
  const lines: string[] = [];
  lines.push(
    `${paint("bold", "Apply:")} ${s.applied.length} applied, ${s.adopted.length > 0 ? `${s.adopted.length} adopted, ` : ""}${s.moved.length > 0 ? `${s.moved.length} moved, ` : ""}${s.failed.length} failed, ${s.inDoubt.length} in doubt, ${s.blocked.length} blocked, ${s.unchanged} unchanged, ${s.orphans.length} orphaned${s.quotaResets > 0 ? `; ${s.quotaResets} quota reset${s.quotaResets === 1 ? "" : "s"}` : ""} (${(s.durationMs / 1000).toFixed(1)} s).`,
  );
  lines.push(
    `Calls: ${interfaceNames()
      .map((i) => interfaceCalls(s.calls, i))
      .join(", ")}; ${retriesAndPauses(s.calls)}.`,
  );
  if (s.batchRoute !== undefined) lines.push(paint("yellow", `Batching: ${s.batchRoute}; production registers it with the slash.`));
  if (s.batchGuard !== undefined) lines.push(paint("yellow", `Batching was off from ${s.batchGuard}: those calls went directly.`));
  if (s.batchFallback !== undefined) lines.push(paint("yellow", `Batching was off after ${s.batchFallback}: the rest went as direct calls.`));
  for (const h of s.health)
    lines.push(
      `Health: ${h.id} ${h.ok ? paint("green", "ok") : paint("red", "failing")} (${h.checks.filter((x) => x.ok).length}/${h.checks.length} checks${h.error === undefined ? "" : `; ${h.error}`})`,
    );
  if (s.skipped.length > 0) lines.push(paint("yellow", `Not started (the apply was stopped): ${s.skipped.join(", ")}`));
  if (s.failed.length > 0) lines.push(paint("red", "Failed:"), ...s.failed.map((f) => `  ${f.id}: ${f.message}`));
  if (s.adopted.length > 0) lines.push(`Adopted (recorded under the server id the annotation or \`state adopt\` gave): ${s.adopted.join(", ")}`);
  if (s.moved.length > 0) lines.push(`Moved (renamed; same object, no call): ${s.moved.join(", ")}`);
  if (s.inDoubt.length > 0) {
    lines.push(paint("red", "In doubt (sent; the outcome is unknown):"), ...s.inDoubt.map((f) => `  ${f.id}: ${f.message}${inDoubtLines(f.id, inv)}`));
  }
  return scrubText(`${lines.join("\n")}\n`);
}
