/**
 * A repository ruleset file's members checked as data, before anything is built of it: its
 * shape against Spectral's own ruleset schema (JSON form), then what that schema leaves as
 * any string — each `formats` name, `function` name and `extends` name against gatesync's fixed
 * tables (ruleset-definition.ts), each JSONPath (`given`, aliases) for what its filters may do
 * (given-check.ts), each `pattern` for RE2 (linear-pattern.ts), and custom functions against
 * `allowCustomFunctions`. Each problem is at its member's path in the file.
 */
import { createRequire } from "node:module";
import type { PathSegment } from "../text/field-path.js";
import { givenProblem } from "./given-check.js";
import { patternProblem } from "./linear-pattern.js";
import { builtinRulesets, coreFunctionNames, formatExports } from "./ruleset-definition.js";

const require = createRequire(import.meta.url);

export interface MemberProblem {
  readonly at: readonly PathSegment[];
  readonly message: string;
}

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => v !== null && typeof v === "object" && !Array.isArray(v);

/** What the checks of one file need to know. */
interface CheckContext {
  readonly problems: MemberProblem[];
  /** Custom functions the file lists (`functions`), when allowed. */
  readonly custom: ReadonlySet<string>;
}

/** Whether a name is a URL (`https://…`): nothing is fetched for a ruleset. */
export const isUrl = (id: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(id);

/** The refusal of a remote ruleset or file. */
export const remoteRefusal = (id: string): string => `\`${id}\` is remote: rulesets are read from the repository only, nothing is fetched`;

/** The refusal of a custom function's JavaScript (`what` names it) while it is not allowed. */
export const customFunctionRefusal = (what: string): string =>
  `${what} is JavaScript from the repository: it is not loaded unless gatesync.yaml sets \`rules.allowCustomFunctions: true\``;

/** Why an `extends` name is refused here (a local file is read and checked by the reader), or undefined. */
export function extendsProblem(name: string): string | undefined {
  if (Object.hasOwn(builtinRulesets, name)) return undefined;
  if (isUrl(name)) return remoteRefusal(name);
  if (!name.startsWith(".") && !name.startsWith("/"))
    return `\`${name}\` is neither one of Spectral's rulesets (${Object.keys(builtinRulesets).join(", ")}) nor a file of the repository (./…): no package is loaded`;
  if (!/\.(ya?ml|json)$/i.test(name)) return `\`${name}\`: a ruleset file is YAML or JSON (.yaml, .yml, .json)`;
  return undefined;
}

/** The local files a ruleset or override extends (names as written). */
export function extendedNames(value: unknown): string[] {
  if (!isMapping(value)) return [];
  const names = (e: unknown): string[] =>
    typeof e === "string" ? [e] : Array.isArray(e) ? e.flatMap((x) => (typeof x === "string" ? [x] : Array.isArray(x) ? [String(x[0])] : [])) : [];
  const all = [...names(value.extends), ...(Array.isArray(value.overrides) ? value.overrides.flatMap((o) => (isMapping(o) ? names(o.extends) : [])) : [])];
  return all.filter((n) => !Object.hasOwn(builtinRulesets, n) && extendsProblem(n) === undefined);
}

function checkFormats(formats: unknown, at: readonly PathSegment[], ctx: CheckContext): void {
  if (!Array.isArray(formats)) return;
  formats.forEach((f, i) => {
    if (typeof f === "string" && Object.hasOwn(formatExports, f)) return;
    ctx.problems.push({ at: [...at, i], message: `${JSON.stringify(f)} is not a format: one of ${Object.keys(formatExports).join(", ")}` });
  });
}

function checkGiven(given: unknown, at: readonly PathSegment[], ctx: CheckContext): void {
  const each = Array.isArray(given) ? given.map((g, i) => [g, [...at, i]] as const) : [[given, at] as const];
  for (const [g, where] of each) {
    const why = typeof g === "string" ? givenProblem(g) : undefined;
    if (why !== undefined) ctx.problems.push({ at: where, message: why });
  }
}

function checkThen(then: unknown, at: readonly PathSegment[], ctx: CheckContext): void {
  if (!isMapping(then)) return;
  const fn = then.function;
  if (typeof fn === "string" && !coreFunctionNames.includes(fn) && !ctx.custom.has(fn)) {
    ctx.problems.push({
      at: [...at, "function"],
      message: `Function is not defined: \`${fn}\` is neither a core function (${coreFunctionNames.join(", ")}) nor one listed under \`functions\``,
    });
  }
  if (fn !== "pattern" || !isMapping(then.functionOptions)) return;
  for (const option of ["match", "notMatch"]) {
    const why = patternProblem(then.functionOptions[option]);
    if (why !== undefined) ctx.problems.push({ at: [...at, "functionOptions", option], message: why });
  }
}

function checkRules(rules: unknown, at: readonly PathSegment[], ctx: CheckContext): void {
  if (!isMapping(rules)) return;
  for (const [name, rule] of Object.entries(rules)) {
    if (!isMapping(rule)) continue;
    checkGiven(rule.given, [...at, name, "given"], ctx);
    if (Array.isArray(rule.then)) rule.then.forEach((t, i) => checkThen(t, [...at, name, "then", i], ctx));
    else checkThen(rule.then, [...at, name, "then"], ctx);
    checkFormats(rule.formats, [...at, name, "formats"], ctx);
  }
}

function checkAliases(aliases: unknown, ctx: CheckContext): void {
  if (!isMapping(aliases)) return;
  for (const [name, alias] of Object.entries(aliases)) {
    if (Array.isArray(alias)) checkGiven(alias, ["aliases", name], ctx);
    if (!isMapping(alias) || !Array.isArray(alias.targets)) continue;
    alias.targets.forEach((t, i) => {
      if (!isMapping(t)) return;
      checkFormats(t.formats, ["aliases", name, "targets", i, "formats"], ctx);
      checkGiven(t.given, ["aliases", name, "targets", i, "given"], ctx);
    });
  }
}

function checkExtends(value: Mapping, at: readonly PathSegment[], ctx: CheckContext): void {
  const e = value.extends;
  const entries =
    typeof e === "string"
      ? [[e, [...at, "extends"]] as const]
      : Array.isArray(e)
        ? e.map((x, i) => [Array.isArray(x) ? x[0] : x, [...at, "extends", i]] as const)
        : [];
  for (const [name, where] of entries) {
    const why = typeof name === "string" ? extendsProblem(name) : undefined;
    if (why !== undefined) ctx.problems.push({ at: where, message: why });
  }
}

interface PathedError {
  readonly message: string;
  readonly path: ReadonlyArray<string | number>;
}

/** Spectral's own schema of a ruleset file (its JSON form): the shape of every member. */
function schemaProblems(value: unknown): MemberProblem[] {
  const { assertValidRuleset } = require("@stoplight/spectral-core") as { assertValidRuleset: (r: unknown, format: "json") => void };
  try {
    assertValidRuleset(value, "json");
    return [];
  } catch (err) {
    const inner = (err as { errors?: unknown }).errors;
    const errors = (Array.isArray(inner) ? inner : [err]) as Array<Partial<PathedError>>;
    return errors.map((e) => ({ at: Array.isArray(e.path) ? [...(e.path as PathSegment[])] : [], message: e.message ?? "not a valid ruleset" }));
  }
}

/** Custom functions a file lists, each named by its file (`functions/x.js`, as the config's reader shows it): refused unless allowed. */
function customFunctionProblems(value: Mapping, functionFile: (dir: string, name: string) => string): MemberProblem[] {
  const dir = typeof value.functionsDir === "string" ? value.functionsDir : "functions";
  const message = customFunctionRefusal;
  if (!Array.isArray(value.functions))
    return value.functionsDir === undefined ? [] : [{ at: ["functionsDir"], message: message("a custom functions' directory") }];
  return value.functions.map((f, i) => ({ at: ["functions", i], message: message(`custom function \`${functionFile(dir, String(f))}\``) }));
}

export interface FileCheckOptions {
  /** Custom functions (`functions`) may be listed. */
  readonly allowCustomFunctions: boolean;
  /** How a custom function's file is shown: `dir` as the ruleset gives it, relative to the ruleset's file. */
  readonly functionFile: (dir: string, name: string) => string;
}

/** The problems of one ruleset file's parsed value. */
export function rulesetFileProblems(value: unknown, opts: FileCheckOptions): MemberProblem[] {
  if (!isMapping(value)) return schemaProblems(value);
  const problems: MemberProblem[] = opts.allowCustomFunctions ? [] : customFunctionProblems(value, opts.functionFile);
  const listed = Array.isArray(value.functions) ? value.functions.filter((f): f is string => typeof f === "string") : [];
  const ctx: CheckContext = { problems, custom: new Set(listed) };
  checkExtends(value, [], ctx);
  checkFormats(value.formats, ["formats"], ctx);
  checkRules(value.rules, ["rules"], ctx);
  checkAliases(value.aliases, ctx);
  if (Array.isArray(value.overrides)) {
    value.overrides.forEach((o, i) => {
      if (!isMapping(o)) return;
      checkExtends(o, ["overrides", i], ctx);
      checkFormats(o.formats, ["overrides", i, "formats"], ctx);
      checkRules(o.rules, ["overrides", i, "rules"], ctx);
    });
  }
  // one finding per member: Spectral's schema and these checks may both name one (these say more)
  const seen = new Set<string>();
  return [...problems, ...schemaProblems(value)].filter((p) => {
    const key = p.at.join("\0");
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
