/**
 * The team's settings of the commit a daemon run applies (settings-owners.ts): read from the
 * repository's settings file at that commit — `gatesync.yaml` at the repository's root, or the
 * path `source.git.config` names — and put over the operator's config for the run. The
 * operator's settings the file writes have no effect; where they differ they are reported once
 * per commit.
 */
import { createHash } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { loadSettingsFile } from "../config/config.js";
import { checkConfigText } from "../config/config-text.js";
import type { GatesyncConfig } from "../config/config.js";
import { ignoredSettings, teamDocumentOf, withoutPath } from "../config/settings-owners.js";
import { ErrorCode, ValidationFailed } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { isInside, toPosix } from "../file-paths.js";
import type { PathSegment } from "../text/field-path.js";
import type { RulesConfig } from "../rules/rules-config.js";
import { workTreeOf } from "../source/repository-path.js";
import type { SourceSnapshot } from "../source/source.js";
import { SchemaRegistry } from "../validate/schema/schema-registry.js";

/** The team settings of one commit. */
export interface RepositorySettings {
  /**
   * The repository's settings file (absolute) with its config; undefined when the team settings
   * are the operator file's own: the repository has no file, or the operator's file is it (a
   * directory source beside it, outside any git work tree).
   */
  readonly from: { readonly file: string; readonly config: GatesyncConfig } | undefined;
  /** A fingerprint of the team settings: the file, its patch files and rulesets ("nothing changed" compares it). */
  readonly hash: string;
  /** The file's operator settings that differ from the operator's, and environments the operator does not run. */
  readonly ignored: readonly Diagnostic[];
}

const real = (p: string): string => (existsSync(p) ? realpathSync(p) : path.resolve(p));

/** Where the repository's settings file of a snapshot is, and the repository root it is named from. */
function settingsFileOf(operator: GatesyncConfig, snapshot: Pick<SourceSnapshot, "root" | "boundary">): { file: string; top: string } | undefined {
  if (operator.source.type === "git") {
    const top = snapshot.boundary;
    const file = path.resolve(top, operator.source.config ?? "gatesync.yaml");
    if (!isInside(file, top) || !isInside(real(file), real(top))) {
      throw new ValidationFailed([
        {
          severity: "error",
          code: ErrorCode.CONFIG_INVALID,
          ...(operator.file === undefined ? {} : { file: operator.file }),
          path: "source.git.config",
          message: `the repository's settings file ${operator.source.config ?? "gatesync.yaml"} lies outside the repository`,
          hint: "name a file inside the repository, relative to its root (default gatesync.yaml)",
        },
      ]);
    }
    return { file, top };
  }
  const top = workTreeOf(real(operator.source.directory));
  return top === undefined ? undefined : { file: path.join(top, "gatesync.yaml"), top };
}

/** What a repository's file may leave out for the schema: the daemon checks its team settings only (teamDocumentOf). */
function completedForSchema(doc: Record<string, unknown>): Record<string, unknown> {
  return { ...doc, ...(doc.source === undefined ? { source: { directory: "." } } : {}), ...(doc.targets === undefined ? { targets: {} } : {}) };
}

/**
 * A fingerprint of a settings file and the files it names — overlay patches (every
 * environment's, or an environment's effective own) and rulesets — whose edits on disk no
 * revision of a source covers: a changed one makes the next run apply, and a reload see it.
 */
export async function settingsFingerprint(bytes: Buffer | string, config: GatesyncConfig): Promise<string> {
  const hash = createHash("sha256").update(bytes);
  const patches = [...(config.environments ?? []).flatMap((e) => e.patches), ...(config.patches ?? [])];
  const patchFiles = patches.flatMap((p) => (p.type === "file" ? [p.file] : []));
  const rulesets = [config.rules?.openapi, config.rules?.resources].filter((f): f is string => f !== undefined);
  for (const file of [...new Set([...patchFiles, ...rulesets])]) hash.update(file).update(await readFile(file).catch(() => Buffer.from("(missing)")));
  return hash.digest("hex").slice(0, 16);
}

/** The team settings are the operator file's own: its overlays and rulesets as they are on disk now. */
async function operatorsOwn(operator: GatesyncConfig): Promise<RepositorySettings> {
  return { from: undefined, hash: await settingsFingerprint("operator", operator), ignored: [] };
}

/** Reads the team settings of a fetched snapshot; a file that does not load makes the commit invalid (ValidationFailed, located). */
export async function readRepositorySettings(
  operator: GatesyncConfig,
  snapshot: Pick<SourceSnapshot, "root" | "boundary">,
  schemas: SchemaRegistry = new SchemaRegistry(),
): Promise<RepositorySettings> {
  const at = settingsFileOf(operator, snapshot);
  if (at === undefined || !existsSync(at.file)) return operatorsOwn(operator);
  if (operator.file !== undefined && real(at.file) === real(operator.file)) return operatorsOwn(operator);
  const shown = toPosix(path.relative(at.top, at.file));
  // a commit's file: bounded like every file of the repository
  if ((await stat(at.file)).size > operator.limits.maxFileBytes) {
    throw new ValidationFailed([
      {
        severity: "error",
        code: ErrorCode.FILE_TOO_LARGE,
        file: shown,
        message: `${shown} is larger than limits.maxFileBytes (${operator.limits.maxFileBytes} bytes)`,
        hint: "keep the repository's settings file small: it holds values, patches, rules and selectors",
      },
    ]);
  }
  const written: { doc?: Record<string, unknown> } = {};
  const { bytes, config, locate } = await loadSettingsFile(shown, at.file, schemas, (doc) => {
    written.doc = doc;
    return completedForSchema(teamDocumentOf(doc));
  });
  const raw = written.doc ?? {};
  const ignored = ignoredSettings(raw, operator.document ?? {}, {
    file: shown,
    locate,
    removable: removableIn(bytes, shown, at.file, schemas),
  });
  return { from: { file: at.file, config }, hash: await settingsFingerprint(bytes, config), ignored };
}

/**
 * Whether the file, as a local run loads it (its schema and the checks across its settings), is
 * no worse without a setting: no finding it did not have. What a hint says to remove, removed,
 * leaves the repository as valid as it was.
 */
function removableIn(bytes: Buffer, shown: string, absolute: string, schemas: SchemaRegistry): (at: readonly PathSegment[]) => boolean {
  const problems = (edit: (doc: Record<string, unknown>) => Record<string, unknown>): string[] => {
    try {
      checkConfigText(bytes, shown, absolute, schemas, edit);
      return [];
    } catch (err) {
      if (err instanceof ValidationFailed) return err.diagnostics.map((d) => `${d.code}\u0000${d.path ?? ""}\u0000${d.message}`);
      throw err;
    }
  };
  const before = new Set(problems((d) => d));
  return (at) => problems((d) => withoutPath(d, at)).every((k) => before.has(k));
}

/**
 * The effective settings of a commit — the one function every reader of a commit goes through
 * (issue 55): the daemon's runs, its next-plan and resource views, a promotion's plan, and
 * `plan`/`validate` of a git source. The operator's config (an environment's effective one,
 * `environmentsOf`) with the team settings read from the commit's checkout.
 */
export async function effectiveSettings(
  operator: GatesyncConfig,
  snapshot: Pick<SourceSnapshot, "root" | "boundary">,
  schemas?: SchemaRegistry,
): Promise<{ readonly config: GatesyncConfig; readonly settings: RepositorySettings }> {
  const settings = await readRepositorySettings(operator, snapshot, schemas);
  return { config: withTeamSettings(operator, settings), settings };
}

/**
 * An environment's config for a run: the operator's (targets, credentials, state, scope, orphans,
 * guard, schedule …) with the commit's team settings — values, overlay patches, selector and
 * rulesets. An environment the repository does not have runs with the top level's values and
 * no patches; whether rulesets may run code stays the operator's.
 */
export function withTeamSettings(operator: GatesyncConfig, settings: RepositorySettings): GatesyncConfig {
  if (settings.from === undefined) return operator;
  const { file, config: team } = settings.from;
  const name = operator.environment;
  const own = name === undefined ? undefined : team.environments?.find((e) => e.name === name);
  const selector = own?.selector ?? team.selector;
  const { values: _values, patches: _patches, selector: _selector, rules: _rules, rulesets: _rulesets, ...operatorOnly } = operator;
  return {
    ...operatorOnly,
    baseDir: path.dirname(file),
    teamFile: file,
    values: { ...team.values, ...own?.values },
    patches: own?.patches ?? [],
    ...(selector === undefined ? {} : { selector }),
    ...(team.rules === undefined ? {} : { rules: withOperatorRuleSettings(team.rules, operator.rules) }),
  };
}

/** The team's rulesets with the operator's say over them: whether they may run code, and their time budgets. */
function withOperatorRuleSettings(team: RulesConfig, operator: RulesConfig | undefined): RulesConfig {
  const { documentTimeoutMs: _document, runTimeoutMs: _run, ...rulesets } = team;
  return {
    ...rulesets,
    allowCustomFunctions: operator?.allowCustomFunctions ?? false,
    ...(operator?.documentTimeoutMs === undefined ? {} : { documentTimeoutMs: operator.documentTimeoutMs }),
    ...(operator?.runTimeoutMs === undefined ? {} : { runTimeoutMs: operator.runTimeoutMs }),
  };
}
