/**
 * A merge-request job's view of a ruleset with custom functions (docs/user/rules.md): the
 * checkout is data, so its JavaScript is never loaded; the rules that call a custom function
 * are taken out of the file's value (each said once, where it is), the rest of the ruleset runs.
 * The daemon, whose operator decides `rules.allowCustomFunctions`, runs them after the merge.
 */
import type { PathSegment } from "../text/field-path.js";

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => v !== null && typeof v === "object" && !Array.isArray(v);

export interface SkippedRule {
  readonly at: readonly PathSegment[];
  readonly name: string;
}

const callsAny = (then: unknown, custom: ReadonlySet<string>): boolean =>
  (Array.isArray(then) ? then : [then]).some((t) => isMapping(t) && typeof t.function === "string" && custom.has(t.function));

function withoutCalls(rules: unknown, at: readonly PathSegment[], custom: ReadonlySet<string>, skipped: SkippedRule[]): unknown {
  if (!isMapping(rules)) return rules;
  const kept: Mapping = {};
  for (const [name, rule] of Object.entries(rules)) {
    if (isMapping(rule) && callsAny(rule.then, custom)) skipped.push({ at: [...at, name], name });
    else kept[name] = rule;
  }
  return kept;
}

/** The file's value without its custom functions and the rules calling them; the rules taken out, at their paths. */
export function withoutCustomFunctions(value: unknown): { value: unknown; skipped: SkippedRule[] } {
  if (!isMapping(value) || (value.functions === undefined && value.functionsDir === undefined)) return { value, skipped: [] };
  const custom = new Set(Array.isArray(value.functions) ? value.functions.filter((f): f is string => typeof f === "string") : []);
  const skipped: SkippedRule[] = [];
  const { functions: _functions, functionsDir: _dir, ...rest } = value;
  const out: Mapping = { ...rest };
  if (rest.rules !== undefined) out.rules = withoutCalls(rest.rules, ["rules"], custom, skipped);
  if (Array.isArray(rest.overrides)) {
    out.overrides = (rest.overrides as unknown[]).map((o: unknown, i): unknown =>
      isMapping(o) && o.rules !== undefined ? { ...o, rules: withoutCalls(o.rules, ["overrides", i, "rules"], custom, skipped) } : o,
    );
  }
  return { value: out, skipped };
}
