/**
 * Classifies an update for the people who review it: pure, and run only on updates whose
 * fields changed (an unchanged resource is never compared). What a change does is the kind's to
 * say (its `classifyUpdate` hook, rules in `kinds/breaking/`); this is what the plan makes of it.
 */
import { knownKind } from "../../kinds/registry.js";
import type { PlannedChange } from "../plan-change.js";
import type { Compatibility, Spec } from "../../kinds/breaking/types.js";
import { compatibilityOf } from "../../kinds/breaking/types.js";

/** Undefined for kinds whose changes are not classified (no `classifyUpdate` hook). */
export function classifyUpdate(kind: string, before: Spec, after: Spec): Compatibility | undefined {
  const classify = knownKind(kind)?.classifyUpdate;
  return classify === undefined ? undefined : compatibilityOf(classify(before, after));
}

/** Only run on an update whose fields changed: unchanged resources are never compared. */
export function classified(kind: string, before: Spec, after: Spec): Pick<PlannedChange, "compatibility" | "breaking"> {
  const compatibility = classifyUpdate(kind, before, after);
  if (compatibility === undefined) return {};
  return { compatibility, breaking: compatibility.changes.filter((c) => c.class === "breaking").map((c) => ({ path: c.path, reason: c.reason })) };
}

/** The change breaks something for the API's consumers or the key's holders. */
export function isBreaking(c: PlannedChange): boolean {
  return (c.breaking?.length ?? 0) > 0;
}
