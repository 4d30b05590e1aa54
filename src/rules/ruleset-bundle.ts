/**
 * A Spectral ruleset file (YAML or JSON) made ready for every checking thread. A repository's
 * ruleset is data: read and checked member by member (ruleset-data.ts), and built into
 * Spectral's `Ruleset` from that data on each thread (ruleset-definition.ts) — nothing of it is
 * turned into code. Only with `rules.allowCustomFunctions`, a ruleset that lists custom
 * functions (checked as data first all the same) is read the way Spectral's own CLI reads one:
 * @stoplight/spectral-ruleset-migrator turns the file into a module, and
 * @stoplight/spectral-ruleset-bundler (rollup) makes one CommonJS bundle of it with the
 * functions' files, evaluated once per thread (rule-runner.ts).
 *
 * Nothing is fetched: a URL (remote `extends`) is refused, as is any package but Spectral's own
 * (they would be looked up in the repository's node_modules), any file outside the directory
 * the rulesets may read, and — unless `allowCustomFunctions` — any JavaScript file: a custom
 * function is code from the repository.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { isInside, toPosix } from "../file-paths.js";
import { Locator } from "../load/yaml-locator.js";
import { parseYaml } from "../load/yaml-reader.js";
import { formatPath } from "../text/field-path.js";
import { prepareRuleset } from "./rule-thread.js";
import { RulesetInvalid, RulesetUnreadable, outsideRefusal, readInside, readRulesetData } from "./ruleset-data.js";
import { customFunctionRefusal, isUrl, remoteRefusal } from "./ruleset-checks.js";
import type { RulesetData } from "./ruleset-definition.js";

/** A ruleset ready for the checking threads: plain data (structured-cloneable). */
export interface PreparedRuleset {
  /** Absolute path of the ruleset file (Spectral matches `overrides` against documents relative to it). */
  readonly source: string;
  /** The ruleset's files as data (every ruleset without custom functions). */
  readonly data?: RulesetData;
  /** With custom functions (allowed): the bundle, a CommonJS module whose export is the ruleset definition. */
  readonly code?: string;
  /** Of what the ruleset is (its data, or its code and every file read): findings are kept per document under it. */
  readonly hash: string;
}

export interface BundleOptions {
  /** Nothing outside it is read (the directory of gatesync.yaml). */
  readonly boundary: string;
  readonly allowCustomFunctions: boolean;
  /** A merge-request job's: rules calling custom functions skipped, each with a note (custom-function-skip.ts). */
  readonly skipCustomFunctions?: boolean;
  /** How the config names the ruleset (`rules.openapi`), for the findings about it. */
  readonly configPath: string;
  /** gatesync.yaml, relative to the working directory, for the findings about it. */
  readonly configFile: string;
}

/** A ruleset that cannot be used: the located findings (CONFIG_INVALID). */
export class RulesetRefused extends Error {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(diagnostics.map((d) => d.message).join("; "));
  }
}

const require = createRequire(import.meta.url);

interface RollupPlugin {
  readonly name: string;
  resolveId?: (id: string, importer: string | undefined) => unknown;
}

interface BundlerModules {
  readonly bundleRuleset: (input: string, opts: { target: "node"; format: "commonjs"; plugins: unknown[] }) => Promise<string>;
  readonly stdin: (input: string, name: string) => unknown;
}

/** Spectral's packages a ruleset may import: all resolved from gatesync's own installation. */
export const spectralPackages = [
  "@stoplight/spectral-core",
  "@stoplight/spectral-functions",
  "@stoplight/spectral-rulesets",
  "@stoplight/spectral-formats",
  "@stoplight/spectral-parsers",
] as const;

function bundlerModules(): BundlerModules {
  const { bundleRuleset } = require("@stoplight/spectral-ruleset-bundler") as Pick<BundlerModules, "bundleRuleset">;
  const { stdin } = require("@stoplight/spectral-ruleset-bundler/plugins/stdin") as Pick<BundlerModules, "stdin">;
  return { bundleRuleset, stdin };
}

const isRelativeOrAbsolute = (id: string): boolean => id.startsWith(".") || path.isAbsolute(id);

/** Why a module the ruleset names is not loaded, or undefined when it may be. */
function refusal(id: string, opts: BundleOptions): string | undefined {
  if (isUrl(id)) return remoteRefusal(id);
  if (!isRelativeOrAbsolute(id)) {
    return (spectralPackages as readonly string[]).includes(id)
      ? undefined
      : `package \`${id}\`: only Spectral's own packages (spectral:oas, the core functions) are loaded, no package from the repository`;
  }
  if (!isInside(path.resolve(id), opts.boundary)) return outsideRefusal(id, opts.boundary);
  if (!/\.(ya?ml|json)$/i.test(id) && !opts.allowCustomFunctions) {
    return customFunctionRefusal(`custom function \`${toPosix(path.relative(opts.boundary, id))}\``);
  }
  return undefined;
}

class Refused extends Error {}

/** The rollup plugin that stops what `refusal` refuses before it is read. */
function guard(opts: BundleOptions, entry: string): RollupPlugin {
  return {
    name: "gatesync-ruleset-guard",
    resolveId(id, importer) {
      if (id === entry || importer === undefined) return null;
      const target = isRelativeOrAbsolute(id) && !path.isAbsolute(id) ? path.resolve(path.dirname(importer), id) : id;
      const why = refusal(target, opts);
      if (why !== undefined) throw new Refused(why);
      return null;
    },
  };
}

/** Where a ruleset file's own syntax error is, found with gatesync's YAML reader. */
function syntaxProblems(text: string, file: string): Diagnostic[] {
  return parseYaml(text, file).diagnostics.map((d) => ({ ...d, code: ErrorCode.CONFIG_INVALID, message: `ruleset: ${d.message}` }));
}

/** The ruleset file's readers: inside the boundary, real paths (no link leads out), syntax checked. */
function guardedFs(opts: BundleOptions, read: Set<string>): { promises: { readFile: (p: string, enc: string) => Promise<string> } } {
  return {
    promises: {
      readFile: async (p: string) => {
        const why = refusal(p, opts);
        if (why !== undefined) throw new Refused(why);
        // read as the data path reads every ruleset file: inside the boundary, through no link out, decoded
        const text = await readInside(p, opts.boundary).catch((err: unknown) => {
          if (err instanceof RulesetUnreadable) throw new Refused(err.message);
          if (err instanceof RulesetInvalid) throw new RulesetRefused(err.diagnostics);
          throw err;
        });
        const shown = toPosix(path.relative(process.cwd(), p));
        const problems = syntaxProblems(text, shown);
        if (problems.length > 0) throw new RulesetRefused(problems);
        read.add(p);
        return text;
      },
    },
  };
}

const refuseFetch = (url: string): Promise<never> => Promise.reject(new Refused(remoteRefusal(url)));

interface PathedError {
  readonly message: string;
  readonly path: ReadonlyArray<string | number>;
}

const hasPath = (e: unknown): e is PathedError => e instanceof Error && Array.isArray((e as { path?: unknown }).path);

/**
 * Spectral's findings about a ruleset's definition (an unknown function, a bad `given`), each
 * at its place in the ruleset file; undefined when the error is not of that kind.
 */
function definitionFindings(err: unknown, file: string): Diagnostic[] | undefined {
  const inner = err instanceof Error ? (err as { errors?: unknown[] }).errors : undefined;
  const errors = Array.isArray(inner) ? inner : [err];
  if (errors.length === 0 || !errors.every(hasPath)) return undefined;
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    // located at the file only
  }
  const shown = toPosix(path.relative(process.cwd(), file));
  const parsed = parseYaml(text, shown).documents[0]?.value;
  const locator = new Locator(new Map([[shown, text]]));
  return errors.map((e) => {
    const at = [...e.path];
    const value = at.reduce<unknown>((v, k) => (v !== null && typeof v === "object" ? (v as Record<string | number, unknown>)[k] : undefined), parsed);
    const named =
      at[at.length - 1] === "function" && typeof value === "string"
        ? `: \`${value}\` is neither a core function (truthy, pattern, schema, …) nor one listed under \`functions\``
        : "";
    return {
      severity: "error",
      code: ErrorCode.CONFIG_INVALID,
      file: shown,
      path: formatPath(at),
      ...(locator.locate(shown, 0, at) ?? {}),
      message: `ruleset: ${e.message}${named}`,
      hint: "fix the ruleset: see https://docs.stoplight.io/docs/spectral/ for its format (see docs/user/rules.md)",
    } satisfies Diagnostic;
  });
}

/** The finding for a ruleset that cannot be used, at the config's key and the ruleset's file. */
function configFinding(file: string, opts: BundleOptions, message: string, hint: string): Diagnostic {
  return {
    severity: "error",
    code: ErrorCode.CONFIG_INVALID,
    file: opts.configFile,
    path: opts.configPath,
    message: `ruleset ${toPosix(path.relative(process.cwd(), file))}: ${message}`,
    hint,
  };
}

function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // an AggregateError (Spectral's ruleset validation) holds one error per problem
  const inner = (err as { errors?: unknown[] }).errors;
  const own = err.message.replace(/^Could not read ruleset at .*?\.\s*/, "");
  const parts = [own, ...(Array.isArray(inner) ? inner.map((e) => (e instanceof Error ? e.message : String(e))) : [])].filter((m) => m !== "");
  const cause = err.cause instanceof Error ? messageOf(err.cause) : "";
  return [...new Set([...parts, cause].filter((m) => m !== ""))].join("; ");
}

/** What a module's `require` calls name (the migrator writes them as JSON strings). */
const requiredIds = (code: string): string[] => [...code.matchAll(/require\(("(?:[^"\\]|\\.)*")\)/g)].map((m) => JSON.parse(m[1]!) as string);

/**
 * The ruleset as one CommonJS module. Without custom functions the migrator's CommonJS output is
 * that module already: it requires Spectral's packages only, and rollup (the bundler) is not
 * even loaded — a second off a cold start. With them, the bundler inlines their files (and the
 * guard decides whether they may be).
 */
async function rulesetCode(file: string, opts: BundleOptions, read: Set<string>, entry: string): Promise<string> {
  const { migrateRuleset } = require("@stoplight/spectral-ruleset-migrator") as {
    migrateRuleset: (file: string, opts: { format: "commonjs" | "esm"; fs: unknown; fetch: unknown }) => Promise<string>;
  };
  const commonjs = await migrateRuleset(file, { format: "commonjs", fs: guardedFs(opts, read), fetch: refuseFetch });
  if (requiredIds(commonjs).every((id) => (spectralPackages as readonly string[]).includes(id))) return commonjs;
  const { bundleRuleset, stdin } = bundlerModules();
  const migrated = await migrateRuleset(file, { format: "esm", fs: guardedFs(opts, read), fetch: refuseFetch });
  return bundleRuleset(entry, { target: "node", format: "commonjs", plugins: [stdin(migrated, entry), guard(opts, entry)] });
}

const outsideHint = "keep the ruleset and what it extends in the repository, beside gatesync.yaml (see docs/user/rules.md)";
const formatHint = "fix the ruleset: see https://docs.stoplight.io/docs/spectral/ for its format (see docs/user/rules.md)";

/** The ruleset's files as data, checked; RulesetRefused when any member is not valid. */
async function checkedData(file: string, opts: BundleOptions): Promise<{ data: RulesetData; customFunctions: boolean; notes: Diagnostic[] }> {
  try {
    return await readRulesetData(file, {
      boundary: opts.boundary,
      allowCustomFunctions: opts.allowCustomFunctions,
      skipCustomFunctions: opts.skipCustomFunctions === true,
    });
  } catch (err) {
    if (err instanceof RulesetInvalid) throw new RulesetRefused(err.diagnostics);
    if (err instanceof RulesetUnreadable) throw new RulesetRefused([configFinding(file, opts, err.message, outsideHint)]);
    throw err;
  }
}

/** What Spectral says of a ruleset it cannot build (an option a function refuses), located. */
function refusedDefinition(err: unknown, file: string, opts: BundleOptions): RulesetRefused {
  if (err instanceof RulesetRefused) return err;
  const located = definitionFindings(err, file);
  if (located !== undefined) return new RulesetRefused(located);
  const refused = err instanceof Refused || (err instanceof Error && err.cause instanceof Refused);
  return new RulesetRefused([configFinding(file, opts, messageOf(err), refused ? outsideHint : formatHint)]);
}

/**
 * Reads, checks and builds (once, now, on this thread's rules' thread, so that what Spectral
 * refuses is found now) the ruleset file. Throws RulesetRefused with located findings when it cannot be used.
 */
export async function bundleRulesetFile(
  file: string,
  opts: BundleOptions,
): Promise<PreparedRuleset & { readonly files: readonly string[]; readonly notes: readonly Diagnostic[] }> {
  const { data, customFunctions, notes } = await checkedData(file, opts);
  if (!customFunctions) {
    const hash = createHash("sha256").update("data\0").update(file).update("\0").update(JSON.stringify(data.files)).digest("hex");
    await prepareRuleset({ source: file, data, hash }).catch((err: unknown) => {
      throw refusedDefinition(err, file, opts);
    });
    return { source: file, data, hash, files: Object.keys(data.files), notes };
  }
  const read = new Set<string>();
  const entry = path.join(path.dirname(file), ".spectral.js");
  const code = await rulesetCode(file, opts, read, entry).catch((err: unknown) => {
    throw refusedDefinition(err, file, opts);
  });
  // every file read (the ruleset, what it extends, its functions) by content: a change to any of
  // them is another ruleset, whatever the bundle keeps of it (the findings cache is keyed by this)
  const hashing = createHash("sha256").update(file).update("\0").update(code);
  for (const each of [...read].sort()) hashing.update(`\0${each}\0`).update(await readFile(each).catch(() => Buffer.alloc(0)));
  const hash = hashing.digest("hex");
  // evaluated on the rules' thread only, never on this one
  await prepareRuleset({ source: file, code, hash }).catch((err: unknown) => {
    throw refusedDefinition(err, file, opts);
  });
  return { source: file, code, hash, files: [...read], notes };
}
