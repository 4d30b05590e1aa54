/**
 * The `rules:` section of gatesync.yaml: which Spectral rulesets apply to what. The paths are
 * relative to gatesync.yaml and must stay inside its directory (the repository).
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { isInside } from "../file-paths.js";

export interface RulesConfig {
  /** Absolute path of the ruleset applied to every ApiDefinition's OpenAPI document. */
  readonly openapi?: string;
  /** Absolute path of the ruleset applied to every resource document. */
  readonly resources?: string;
  /** Rulesets may load their custom JavaScript functions. */
  readonly allowCustomFunctions: boolean;
  /** A merge-request job's (cli/command-settings.ts): the rules calling custom functions are skipped with a note, never loaded. */
  readonly skipCustomFunctions?: boolean;
  /** How long the rules may run on one document, and in one run (rule-thread.ts: defaults when unset). */
  readonly documentTimeoutMs?: number;
  readonly runTimeoutMs?: number;
}

export const rulesetTargets = ["openapi", "resources"] as const;
export type RulesetTarget = (typeof rulesetTargets)[number];

/** The section of a document that passed the schema, paths resolved against `baseDir`, durations read with `durationMs` (the config's). */
export function rulesFromDocument(raw: unknown, baseDir: string, durationMs: (text: string) => number): RulesConfig | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const r = raw as Record<string, unknown>;
  const paths = Object.fromEntries(rulesetTargets.filter((t) => typeof r[t] === "string").map((t) => [t, path.resolve(baseDir, r[t] as string)]));
  return {
    ...paths,
    allowCustomFunctions: r.allowCustomFunctions === true,
    ...(typeof r.documentTimeout === "string" ? { documentTimeoutMs: durationMs(r.documentTimeout) } : {}),
    ...(typeof r.runTimeout === "string" ? { runTimeoutMs: durationMs(r.runTimeout) } : {}),
  };
}

/** Paths that leave the config's directory or name no file: located findings. */
export function rulesProblems(
  rules: RulesConfig | undefined,
  baseDir: string,
  file: string,
  locate: (p: readonly string[]) => { line?: number; column?: number },
): Diagnostic[] {
  if (rules === undefined) return [];
  const problems: Diagnostic[] = [];
  for (const target of rulesetTargets) {
    const at = rules[target];
    if (at === undefined) continue;
    const where = { file, path: `rules.${target}`, ...locate(["rules", target]) };
    const real = existsSync(at) ? realpathSync(at) : at;
    if (!isInside(at, baseDir) || !isInside(real, existsSync(baseDir) ? realpathSync(baseDir) : baseDir)) {
      problems.push({
        severity: "error",
        code: ErrorCode.CONFIG_INVALID,
        ...where,
        message: `the ruleset ${at} lies outside ${baseDir}`,
        hint: "keep the ruleset in the repository, beside gatesync.yaml, and name it relative to it",
      });
    } else if (!existsSync(at) || !statSync(at).isFile()) {
      problems.push({
        severity: "error",
        code: ErrorCode.CONFIG_INVALID,
        ...where,
        message: `no ruleset file at ${path.relative(baseDir, at)}`,
        hint: "give the path of a Spectral ruleset (YAML or JSON) relative to gatesync.yaml: docs/user/rules.md has examples for both targets",
      });
    }
  }
  return problems;
}
