/**
 * The config's rulesets made ready for a run: bundled once (ruleset-bundle.ts), or refused with
 * located CONFIG_INVALID findings. Nothing of Spectral is loaded for a config without `rules`.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Locator } from "../load/yaml-locator.js";
import path from "node:path";
import { ValidationFailed } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { toPosix } from "../file-paths.js";
import { RulesetRefused, bundleRulesetFile } from "./ruleset-bundle.js";
import type { PreparedRuleset } from "./ruleset-bundle.js";
import { defaultBudget } from "./rule-thread.js";
import { rulesetTargets } from "./rules-config.js";
import { findingsCacheDir } from "./findings-cache.js";
import { findingsCacheTrust } from "./cache-trust.js";
import type { RulesetsCode } from "./rule-runner.js";
import type { RulesConfig } from "./rules-config.js";

/** What of gatesync.yaml the rulesets need (config.ts' GatesyncConfig has it). */
export interface RulesOwner {
  /** The file it was read from (absolute). */
  readonly file: string | undefined;
  /** A daemon run's: the repository's settings file that names the rules. */
  readonly teamFile?: string;
  readonly baseDir: string;
  readonly rules?: RulesConfig;
  readonly rulesets?: PreparedRules;
}

export interface PreparedRules {
  readonly openapi?: PreparedRuleset;
  readonly resources?: PreparedRuleset;
  /** Of both rulesets: part of the config's identity (a daemon reloads when it changes). */
  readonly hash: string;
  /** Where the findings are kept across processes: `.gatesync/rules-cache/` beside gatesync.yaml; none with GATESYNC_RULES_CACHE=off. */
  readonly cacheDir?: string;
  /** Why the cache is not used in this run (cache-trust.ts), reported with the run's findings. */
  readonly cacheWarning?: Diagnostic;
  /** The rules a merge-request job skips (they call custom functions), one located note each. */
  readonly notes?: readonly Diagnostic[];
  /** How long the rules may run on one document and in one run. */
  readonly budget: { readonly documentMs: number; readonly runMs: number };
}

/** The config's rulesets bundled; undefined without `rules`. Throws ValidationFailed (CONFIG_INVALID) for one that cannot be used. */
export async function prepareRules(config: RulesOwner): Promise<PreparedRules | undefined> {
  const rules = config.rules;
  if (rules === undefined || (rules.openapi === undefined && rules.resources === undefined)) return undefined;
  // a daemon run's rules are the commit's: named in the repository's file
  const rulesFile = config.teamFile ?? config.file;
  const configFile = rulesFile === undefined ? "gatesync.yaml" : toPosix(path.relative(process.cwd(), rulesFile));
  const prepared: { -readonly [K in keyof PreparedRules]?: PreparedRules[K] } = {};
  const problems: Diagnostic[] = [];
  const notes: Diagnostic[] = [];
  const hash = createHash("sha256");
  for (const target of rulesetTargets) {
    const file = rules[target];
    if (file === undefined) continue;
    try {
      const {
        files: _read,
        notes: skipped,
        ...ruleset
      } = await bundleRulesetFile(file, {
        boundary: config.baseDir,
        allowCustomFunctions: rules.allowCustomFunctions,
        skipCustomFunctions: rules.skipCustomFunctions === true,
        configPath: `rules.${target}`,
        configFile,
      });
      prepared[target] = ruleset;
      notes.push(...skipped);
      hash.update(`${target}\0${ruleset.hash}\0`);
    } catch (err) {
      if (!(err instanceof RulesetRefused)) throw err;
      problems.push(...err.diagnostics);
    }
  }
  if (problems.length > 0) throw new ValidationFailed(problems.map((d) => (d.file === configFile ? { ...d, ...configPosition(rulesFile, d.path) } : d)));
  const wanted = process.env.GATESYNC_RULES_CACHE === "off" ? undefined : findingsCacheDir(config.baseDir);
  const trust = wanted === undefined ? undefined : findingsCacheTrust(wanted);
  const cacheDir = trust?.trusted === true ? wanted : undefined;
  return {
    ...prepared,
    hash: hash.digest("hex"),
    budget: { documentMs: rules.documentTimeoutMs ?? defaultBudget.documentMs, runMs: rules.runTimeoutMs ?? defaultBudget.runMs },
    ...(cacheDir === undefined ? {} : { cacheDir }),
    ...(trust?.trusted === false ? { cacheWarning: trust.warning } : {}),
    ...(notes.length === 0 ? {} : { notes }),
  };
}

/** Where gatesync.yaml names a ruleset (`rules.openapi`), for the findings about it. */
function configPosition(file: string | undefined, at: string | undefined): { line?: number; column?: number } {
  if (file === undefined || at === undefined) return {};
  try {
    return new Locator(new Map([[file, readFileSync(file, "utf8")]])).locate(file, 0, at.split(".")) ?? {};
  } catch {
    return {};
  }
}

/** What the checking threads receive of the rulesets: their data (or bundles) and the run's budget, its deadline from now. */
export function rulesetsCode(rules: PreparedRules | undefined): RulesetsCode | undefined {
  if (rules === undefined) return undefined;
  const { openapi, resources } = rules;
  return {
    budget: { ...rules.budget, deadline: Date.now() + rules.budget.runMs },
    ...(openapi === undefined ? {} : { openapi }),
    ...(resources === undefined ? {} : { resources }),
    ...(rules.cacheDir === undefined ? {} : { cacheDir: rules.cacheDir }),
  };
}

/** The config with its rulesets bundled (the daemon keeps them with the config in force). */
export async function withRulesets<C extends RulesOwner>(config: C): Promise<C> {
  const rulesets = await prepareRules(config);
  return rulesets === undefined ? config : { ...config, rulesets };
}

/** The rulesets a run applies: the ones kept with the config, else the files bundled now. */
export async function rulesetsOf(config: RulesOwner | undefined): Promise<PreparedRules | undefined> {
  if (config === undefined) return undefined;
  return config.rulesets ?? prepareRules(config);
}
