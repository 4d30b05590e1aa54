/**
 * A repository's ruleset made into Spectral's `Ruleset` from data alone: the files as parsed
 * (ruleset-data.ts read and checked them), with the few members Spectral wants as objects
 * taken from fixed tables — `extends: spectral:oas` is Spectral's own ruleset object, a local
 * `extends` the definition made of that file, a `formats` name one of @stoplight/spectral-formats'
 * functions, a `function` name one of @stoplight/spectral-functions'. No text is evaluated and
 * no module is generated (Spectral's migrator wrote format names into the code it generated).
 * The data is plain (structured-cloneable): every thread builds the same ruleset from it.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { linearPattern } from "./linear-pattern.js";

const require = createRequire(import.meta.url);

/** A ruleset as data: every file it is made of, parsed, by absolute path. */
export interface RulesetData {
  /** The file the config names. */
  readonly entry: string;
  readonly files: Readonly<Record<string, unknown>>;
}

/** Spectral's built-in rulesets by the name `extends` gives them. */
export const builtinRulesets: Readonly<Record<string, string>> = { "spectral:oas": "oas", "spectral:asyncapi": "asyncapi", "spectral:arazzo": "arazzo" };

/** Format names (as Spectral's documentation and migrator spell them) and their function in @stoplight/spectral-formats. */
export const formatExports: Readonly<Record<string, string>> = {
  oas2: "oas2",
  oas3: "oas3",
  "oas3.0": "oas3_0",
  "oas3.1": "oas3_1",
  "oas3.2": "oas3_2",
  asyncapi2: "asyncapi2",
  asyncapi3: "aas3",
  arazzo1: "arazzo1_0",
  "arazzo1.0": "arazzo1_0",
  "json-schema": "jsonSchema",
  "json-schema-loose": "jsonSchemaLoose",
  "json-schema-draft4": "jsonSchemaDraft4",
  "json-schema-draft6": "jsonSchemaDraft6",
  "json-schema-draft7": "jsonSchemaDraft7",
  "json-schema-draft-2019-09": "jsonSchemaDraft2019_09",
  "json-schema-2019-09": "jsonSchemaDraft2019_09",
  "json-schema-draft-2020-12": "jsonSchemaDraft2020_12",
  "json-schema-2020-12": "jsonSchemaDraft2020_12",
};

/** Spectral's core functions by name (truthy, pattern, schema, …). */
export const coreFunctionNames: readonly string[] = [
  "alphabetical",
  "casing",
  "defined",
  "enumeration",
  "falsy",
  "length",
  "pattern",
  "schema",
  "truthy",
  "undefined",
  "unreferencedReusableObject",
  "xor",
  "or",
];

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => v !== null && typeof v === "object" && !Array.isArray(v);

function formatFunction(name: unknown): unknown {
  const formats = require("@stoplight/spectral-formats") as Mapping;
  const exported = typeof name === "string" && Object.hasOwn(formatExports, name) ? formats[formatExports[name]!] : undefined;
  if (typeof exported !== "function") throw new Error(`unknown format ${JSON.stringify(name)}`);
  return exported;
}

function coreFunction(name: unknown): unknown {
  if (name === "pattern") return linearPattern();
  const functions = require("@stoplight/spectral-functions") as Mapping;
  if (typeof name !== "string" || !coreFunctionNames.includes(name) || typeof functions[name] !== "function")
    throw new Error(`unknown function ${JSON.stringify(name)}`);
  return functions[name];
}

const mapFormats = (formats: unknown): unknown => (Array.isArray(formats) ? formats.map(formatFunction) : formats);

/** A rule's `then` and `formats` as Spectral's objects. */
function ruleDefinition(rule: unknown): unknown {
  if (!isMapping(rule)) return rule;
  const then = (t: unknown): unknown => (isMapping(t) ? { ...t, function: coreFunction(t.function) } : t);
  return {
    ...rule,
    ...(rule.then === undefined ? {} : { then: Array.isArray(rule.then) ? rule.then.map(then) : then(rule.then) }),
    ...(rule.formats === undefined ? {} : { formats: mapFormats(rule.formats) }),
  };
}

const mapRules = (rules: unknown): unknown =>
  isMapping(rules) ? Object.fromEntries(Object.entries(rules).map(([name, rule]) => [name, ruleDefinition(rule)])) : rules;

function mapAliases(aliases: unknown): unknown {
  if (!isMapping(aliases)) return aliases;
  const alias = (a: unknown): unknown =>
    isMapping(a) && Array.isArray(a.targets)
      ? { ...a, targets: (a.targets as unknown[]).map((t) => (isMapping(t) && t.formats !== undefined ? { ...t, formats: mapFormats(t.formats) } : t)) }
      : a;
  return Object.fromEntries(Object.entries(aliases).map(([name, a]) => [name, alias(a)]));
}

/** The members of a ruleset or an override that Spectral wants as objects. */
function withObjects(value: Mapping, extension: (name: string) => unknown): Mapping {
  const extend = (e: unknown): unknown => (typeof e === "string" ? extension(e) : Array.isArray(e) ? [extension(String(e[0])), e[1]] : e);
  const { functions: _functions, functionsDir: _functionsDir, ...rest } = value;
  return {
    ...rest,
    ...(value.extends === undefined ? {} : { extends: Array.isArray(value.extends) ? value.extends.map(extend) : extend(value.extends) }),
    ...(value.formats === undefined ? {} : { formats: mapFormats(value.formats) }),
    ...(value.rules === undefined ? {} : { rules: mapRules(value.rules) }),
    ...(value.aliases === undefined ? {} : { aliases: mapAliases(value.aliases) }),
  };
}

/** The definition Spectral's `Ruleset` takes, built from the data of `file` (the entry by default). */
export function rulesetDefinition(data: RulesetData, file = data.entry): Mapping {
  const value = data.files[file];
  if (!isMapping(value)) throw new Error(`the ruleset ${file} is not a mapping`);
  const extension = (name: string): unknown => {
    const builtin = builtinRulesets[name];
    if (builtin !== undefined) return (require("@stoplight/spectral-rulesets") as Mapping)[builtin];
    const target = path.resolve(path.dirname(file), name);
    if (!Object.hasOwn(data.files, target)) throw new Error(`the ruleset extends ${name}, which was not read`);
    return rulesetDefinition(data, target);
  };
  const own = withObjects(value, extension);
  return {
    ...own,
    ...(Array.isArray(value.overrides) ? { overrides: (value.overrides as unknown[]).map((o) => (isMapping(o) ? withObjects(o, extension) : o)) } : {}),
  };
}
