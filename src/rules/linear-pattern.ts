/**
 * Spectral's `pattern` function with a linear-time engine (re2js, RE2's syntax): a backtracking
 * RegExp on a 60-character value can take longer than the universe's age (`^([A-Za-z0-9]+ ?)+$`
 * on `aaa…a!`), RE2 answers in time proportional to the value. Patterns are written as for
 * Spectral — `^/shop/`, or `/^shop/i` with flags `i`, `m`, `s` — in RE2's syntax: no
 * look-ahead, look-behind or back-reference (docs/user/rules.md). A repository's pattern that
 * RE2 cannot compile is refused when the ruleset is read (`patternProblem`); one of Spectral's
 * own rulesets that it cannot compile keeps Spectral's RegExp (bounded by the rules' budget).
 */
import { createRequire } from "node:module";
import { linearTest as compileLinear, re2 } from "../linear-regex.js";

const require = createRequire(import.meta.url);

/** Spectral's `/source/flags` form of a pattern (spectral-functions' pattern.js). */
const literalForm = /^\/(.+)\/([a-z]*)$/;

/** Spectral's flags as RE2's (g, u, y change nothing for a test). */
const flagBits = (): Record<string, number> => ({ i: re2().CASE_INSENSITIVE, m: re2().MULTILINE, s: re2().DOTALL, g: 0, u: 0, y: 0 });

type Test = (value: string) => boolean;

/** The pattern compiled with RE2; throws (RE2JSSyntaxException, or an Error for a flag) when it cannot be. */
function linearTest(pattern: string | RegExp): Test {
  const split = typeof pattern === "string" ? literalForm.exec(pattern) : [pattern.source, pattern.source, pattern.flags];
  const source = split === null ? (pattern as string) : split[1]!;
  let flags = 0;
  for (const flag of split === null ? "" : split[2]!) {
    const bit = flagBits()[flag];
    if (bit === undefined) throw new Error(`the flag \`${flag}\` is not supported (i, m, s are)`);
    flags |= bit;
  }
  return compileLinear(source, flags);
}

/** Why a repository's pattern cannot be used, or undefined. */
export function patternProblem(pattern: unknown): string | undefined {
  if (typeof pattern !== "string") return undefined;
  try {
    linearTest(pattern);
    return undefined;
  } catch (err) {
    return `the pattern ${JSON.stringify(pattern)} is not accepted: ${err instanceof Error ? err.message : String(err)}; patterns use RE2's syntax (no look-around, no back-reference: see docs/user/rules.md)`;
  }
}

const compiledTests = new Map<string | RegExp, Test>();

/** The pattern's test: RE2's; Spectral's own RegExp only for a pattern of Spectral's rulesets RE2 cannot compile. */
function testOf(pattern: string | RegExp): Test {
  let test = compiledTests.get(pattern);
  if (test === undefined) {
    try {
      test = linearTest(pattern);
    } catch {
      const native = typeof pattern === "string" ? (literalForm.exec(pattern) ?? [pattern, pattern, ""]) : [pattern.source, pattern.source, pattern.flags];
      const regexp = new RegExp(native[1]!, native[2]!.replace(/[gy]/g, ""));
      test = (value) => regexp.test(value);
    }
    if (compiledTests.size >= 1_000) compiledTests.delete(compiledTests.keys().next().value!);
    compiledTests.set(pattern, test);
  }
  return test;
}

interface PatternOptions {
  readonly match?: string | RegExp;
  readonly notMatch?: string | RegExp;
}

type RulesetFunction = (input: unknown, options: unknown, context: unknown) => unknown;

let made: RulesetFunction | undefined;

/** Spectral's `pattern` (same options, same messages) on RE2. */
export function linearPattern(): RulesetFunction {
  if (made !== undefined) return made;
  const { createRulesetFunction } = require("@stoplight/spectral-core") as {
    createRulesetFunction: (meta: unknown, fn: (input: string, opts: PatternOptions) => unknown) => RulesetFunction;
  };
  // as Spectral's own pattern function finds them (its dependencies)
  const functionsRequire = createRequire(require.resolve("@stoplight/spectral-functions"));
  const { printValue } = functionsRequire("@stoplight/spectral-runtime") as { printValue: (v: unknown) => string };
  const { optionSchemas } = functionsRequire("./optionSchemas") as { optionSchemas: { pattern: unknown } };
  made = createRulesetFunction({ input: { type: "string" }, options: optionSchemas.pattern }, function pattern(value, opts) {
    const results: Array<{ message: string }> = [];
    if (opts.match !== undefined && !testOf(opts.match)(value))
      results.push({ message: `#{{print("value")}} must match the pattern ${printValue(opts.match)}` });
    if (opts.notMatch !== undefined && testOf(opts.notMatch)(value))
      results.push({ message: `#{{print("value")}} must not match the pattern ${printValue(opts.notMatch)}` });
    return results.length === 0 ? undefined : results;
  });
  return made;
}
