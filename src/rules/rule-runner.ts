/**
 * Running a prepared ruleset (ruleset-bundle.ts) on one document, on the rules' thread
 * (rule-worker.ts; rule-thread.ts bounds it): the ruleset is built from its data (or its bundle
 * evaluated) once per thread, and Spectral's modules are loaded on first use — a run, a command
 * or a worker without rules never loads them.
 *
 * Only Spectral's supported inputs are used for the document: it is handed over already parsed
 * (gatesync's reader parsed it; located-document.ts), located only where Spectral asks (a
 * finding), and resolved by Spectral's own resolver with no reader for any scheme — inside the
 * document only, no file, no network — which returns a document without `$ref` as it is
 * (local-resolver.ts). One Spectral instance per ruleset and thread. What Spectral
 * offers no hook for is replaced inside its packages (spectral-speed.ts).
 * GATESYNC_SPECTRAL_AS_IS=1 lints as Spectral ships, without any of it, to compare.
 */
import { createRequire } from "node:module";
import type { PathSegment } from "../text/field-path.js";
import { speedUpSpectral } from "./spectral-speed.js";
import { localResolver } from "./local-resolver.js";
import { locatedDocument } from "./located-document.js";
import { linearPattern } from "./linear-pattern.js";
import { rulesetDefinition } from "./ruleset-definition.js";
import type { RulesetData } from "./ruleset-definition.js";

const require = createRequire(import.meta.url);

/** Line and column of a member of a document of a file (validate/findings.ts' Locate). */
export type Locate = (file: string, index: number, path: readonly PathSegment[], key?: boolean) => { line?: number; column?: number };

/** Where in which document the findings are reported (validate/findings.ts' Place). */
export interface Place {
  readonly file: string;
  readonly index: number;
  readonly resource?: string | undefined;
  /** Path of the checked value from the document's root. */
  readonly base?: readonly PathSegment[];
}

/** The prepared ruleset as a checking thread receives it (see PreparedRuleset): its data, or (custom functions allowed) its bundle. */
export interface RulesetCode {
  readonly source: string;
  readonly data?: RulesetData;
  readonly code?: string;
  readonly hash: string;
}

/** How long rules may run (rule-thread.ts): each document, and the whole run until `deadline` (Date.now()'s clock). */
export interface RulesBudget {
  readonly documentMs: number;
  readonly runMs: number;
  readonly deadline: number;
}

/** The rulesets a run applies. */
export interface RulesetsCode {
  /** The run's budget for rules (its deadline set when the run starts). */
  readonly budget?: RulesBudget;
  readonly openapi?: RulesetCode;
  readonly resources?: RulesetCode;
  /** Where each file's findings are kept across processes (findings-cache.ts); none without. */
  readonly cacheDir?: string;
}

interface SpectralResult {
  readonly code: string | number;
  readonly message: string;
  readonly path: ReadonlyArray<string | number>;
  readonly severity: number;
}

interface SpectralLike {
  run(target: unknown): Promise<SpectralResult[]>;
}

interface SpectralModules {
  readonly Spectral: new (opts: { resolver: unknown }) => SpectralLike & { setRuleset(r: unknown): void };
  readonly Ruleset: new (definition: unknown, opts: { severity: string; source: string }) => unknown;
  readonly Resolver: new (opts: { resolvers: Record<string, never>; uriCache: RecentDocuments }) => unknown;
}

let modules: SpectralModules | undefined;

/** GATESYNC_SPECTRAL_AS_IS: Spectral exactly as it ships (no short path, nothing replaced), to compare findings and time. */
const asIs = process.env.GATESYNC_SPECTRAL_AS_IS !== undefined;

function spectral(): SpectralModules {
  if (modules === undefined) {
    if (!asIs) speedUpSpectral();
    const { Spectral, Ruleset } = require("@stoplight/spectral-core") as Pick<SpectralModules, "Spectral" | "Ruleset">;
    const { Resolver } = require("@stoplight/spectral-ref-resolver") as Pick<SpectralModules, "Resolver">;
    modules = { Spectral, Ruleset, Resolver };
  }
  return modules;
}

/** The packages the bundle may require (the bundle guard let nothing else through). */
const allowed = new Set([
  "@stoplight/spectral-core",
  "@stoplight/spectral-functions",
  "@stoplight/spectral-rulesets",
  "@stoplight/spectral-formats",
  "@stoplight/spectral-parsers",
]);

function requireForRuleset(id: string): unknown {
  if (!allowed.has(id)) throw new Error(`a ruleset may not load \`${id}\``);
  return require(id);
}

/** The ruleset a bundle defines (throws what Spectral says of a bad one). */
function evaluateRuleset(code: string, source: string): unknown {
  const m: { exports?: unknown } = {};
  // evaluated as Spectral's own loader does (ruleset-bundler/with-loader): a module body
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- see above
  const body = Function("module, require", code) as (module: typeof m, req: typeof requireForRuleset) => void;
  body(m, requireForRuleset);
  if (m.exports === null || typeof m.exports !== "object") throw new Error("the ruleset defines nothing");
  const { Ruleset } = spectral();
  return new Ruleset(m.exports, { severity: "recommended", source });
}

interface RuleLike {
  readonly then: Array<{ function: unknown }>;
}

/** Every rule's `pattern` — the repository's and those of Spectral's own rulesets — on RE2 (linear-pattern.ts). */
function withLinearPatterns(ruleset: unknown): unknown {
  const { pattern } = require("@stoplight/spectral-functions") as { pattern: unknown };
  for (const rule of Object.values((ruleset as { rules: Record<string, RuleLike> }).rules)) {
    for (const then of rule.then) if (then.function === pattern) then.function = linearPattern();
  }
  return ruleset;
}

/** Spectral's `Ruleset` of a prepared ruleset: built from its data, or (custom functions allowed) its bundle evaluated. Throws what Spectral says of a bad one. */
function buildRuleset(ruleset: RulesetCode): unknown {
  if (ruleset.data !== undefined) {
    const { Ruleset } = spectral();
    return withLinearPatterns(new Ruleset(rulesetDefinition(ruleset.data), { severity: "recommended", source: ruleset.source }));
  }
  if (ruleset.code === undefined) throw new Error("a prepared ruleset holds neither data nor code");
  return withLinearPatterns(evaluateRuleset(ruleset.code, ruleset.source));
}

/**
 * The resolver's cache of documents by URI (its `uriCache` option), holding the latest few only.
 * Its own cache keeps every document a thread ever linted, by file name — and with it the
 * document, Spectral's inventory and the file's syntax trees (a heap snapshot of a cold
 * validate of 10,000 resources: all of them on the thread, past a 200 MB heap). Nothing is
 * fetched or read (no resolver for any scheme), so the cache serves only a document naming its
 * own file in a reference, during its own lint: the latest entries are enough for that.
 */
export class RecentDocuments {
  private readonly entries = new Map<string, unknown>();
  readonly stats = { hits: 0, misses: 0 };

  get(key: string): unknown {
    const found = this.entries.get(key);
    if (found === undefined) this.stats.misses++;
    else this.stats.hits++;
    return found;
  }

  set(key: string, value: unknown): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > 8) this.entries.delete(this.entries.keys().next().value!);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  purge(): void {
    this.entries.clear();
  }
}

/**
 * Spectral as it ships (GATESYNC_SPECTRAL_AS_IS) is given no position: the findings are located
 * afterwards. Module-level: a closure kept in the resolver's cache kept each file's locator alive.
 */
const noPosition = (): undefined => undefined;

/** A finding as Spectral gives it, in the order it gives them without positions: plain data, sent back from the rules' thread. */
export interface RawFinding {
  readonly code: string;
  readonly message: string;
  readonly path: ReadonlyArray<string | number>;
  readonly severity: number;
}

/** Where the rules' thread says which rule is running: the rule's index in `ruleNames` plus one (0: none). */
export type RuleProgress = Int32Array;

/** A ruleset made ready on the rules' thread (rule-worker.ts). */
export class RuleRunner {
  private readonly spectral: SpectralLike;
  private readonly uriCache = new RecentDocuments();
  /** Lints under way on this thread. */
  private linting = 0;
  /** The rules by the index the progress holds. */
  readonly ruleNames: readonly string[];

  constructor(ruleset: RulesetCode, progress?: RuleProgress) {
    const { Spectral, Resolver } = spectral();
    const uriCache = this.uriCache;
    const resolver = asIs ? new Resolver({ resolvers: {}, uriCache }) : localResolver(uriCache);
    const s = new Spectral({ resolver });
    const built = buildRuleset(ruleset);
    this.ruleNames = progress === undefined ? [] : reportingProgress(built, progress);
    s.setRuleset(built);
    this.spectral = s;
  }

  /**
   * Spectral's run, after which the resolver's cache is emptied once no other lint is under
   * way: an entry serves only the document being resolved (a reference naming its own file),
   * and kept for the next documents, each resolution — the document, its resolved copy, its
   * graph — outlived several lints and was promoted to the old generation as garbage.
   */
  private async resolvedAndForgotten(input: unknown): Promise<SpectralResult[]> {
    this.linting++;
    try {
      return await this.spectral.run(input);
    } finally {
      if (--this.linting === 0) this.uriCache.purge();
    }
  }

  /** The findings of the ruleset on `value` (`absolute`: the file's path, which `overrides` match against). */
  async run(value: unknown, absolute: string): Promise<RawFinding[]> {
    let results: SpectralResult[];
    if (asIs) {
      results = await this.spectral.run({ parsed: { data: value, diagnostics: [] }, source: absolute, getLocationForJsonPath: noPosition });
    } else {
      // positions are the checking thread's (it holds the syntax trees): the findings in Spectral's order without them
      const document = locatedDocument(value, absolute, () => ({}));
      results = document.inSpectralOrder(await this.resolvedAndForgotten(document.input));
    }
    return results.map((r) => ({ code: String(r.code), message: r.message, path: [...r.path], severity: r.severity }));
  }
}

/**
 * Each rule's functions made to say, before each call, which rule is running (in `progress`):
 * a rule that never returns is named when its thread is stopped. The rules' names by index.
 */
function reportingProgress(ruleset: unknown, progress: RuleProgress): string[] {
  const names: string[] = [];
  for (const [name, rule] of Object.entries((ruleset as { rules: Record<string, RuleLike> }).rules)) {
    names.push(name);
    const index = names.length;
    for (const then of rule.then) {
      const fn = then.function as (this: unknown, ...args: unknown[]) => unknown;
      then.function = function (this: unknown, ...args: unknown[]): unknown {
        Atomics.store(progress, 0, index);
        return fn.apply(this, args);
      };
    }
  }
  return names;
}
