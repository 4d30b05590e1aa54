/**
 * The one linear-time regular-expression engine for patterns a repository writes (re2js, RE2's
 * syntax, as Go and SOPS use it): a backtracking RegExp on a crafted pattern and value can run
 * for ever, RE2 answers in time proportional to the value. Loaded on first use: a run that
 * compiles no such pattern never loads it (start-up). Used by the rulesets' `pattern`
 * (rules/linear-pattern.ts) and a SOPS file's selectors (secrets/sops-format.ts).
 */
import { createRequire } from "node:module";
import type { RE2JS as RE2JSClass } from "re2js";

const require = createRequire(import.meta.url);

let engine: typeof RE2JSClass | undefined;

/** re2js' class: `compile(source, flags)` and its flag constants. */
export const re2 = (): typeof RE2JSClass => (engine ??= (require("re2js") as { RE2JS: typeof RE2JSClass }).RE2JS);

/** A compiled pattern's test (does it match anywhere in the value); throws when RE2 cannot compile it. */
export function linearTest(source: string, flags = 0): (value: string) => boolean {
  const compiled = re2().compile(source, flags);
  return (value) => compiled.matcher(value).find();
}
