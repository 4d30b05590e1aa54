/**
 * `environments:` and `values:` in gatesync.yaml (docs/user/environments.md): the sections as
 * written, typed. What an environment's effective config is (its settings over the top level's,
 * its state namespaced) is environments.ts.
 */
import path from "node:path";
import { ErrorCode } from "../errors.js";
import type { Diagnostic, GatesyncError } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";
import { isInside } from "../file-paths.js";
import { parseSelector } from "../label-selector.js";
import { notificationsFromDocument } from "./notifications.js";
import type { NotificationsConfig } from "./notifications.js";
import { scheduleConfig, secretsConfig, sourceConfig, stateConfig, targetsConfig } from "./config-sections.js";
import { promotionChainProblems, promotionFromDocument } from "./promotion-section.js";
import type { PromotionSettings } from "./promotion-section.js";
import { windowProblems, windowsFromDocument } from "./windows-section.js";
import type { SyncWindow } from "./windows-section.js";
import type { ScheduleConfig, SecretsConfig, SourceConfig, StateConfig, TargetsConfig } from "./config-sections.js";
import { trackFromDocument } from "./track-section.js";
import type { TrackSetting } from "./track-section.js";

/** What `${var:NAME}` is replaced with: a string, a number or a boolean. */
export type EnvironmentValue = string | number | boolean;

/**
 * One overlay patch of an environment: a file of patch documents or one document written inline.
 * `at` is where gatesync.yaml names it (`environments.staging.patches[0]`), for findings.
 */
export type PatchSource =
  | { readonly type: "file"; readonly file: string; readonly written: string; readonly at: string }
  | { readonly type: "inline"; readonly document: Readonly<Record<string, unknown>>; readonly at: string };

/** One entry of `environments:`, as written: only what it sets itself (the top level fills the rest). */
export interface EnvironmentDefinition {
  readonly name: string;
  readonly targets?: TargetsConfig;
  /** Its own values only (over the top level's). */
  readonly values: Readonly<Record<string, EnvironmentValue>>;
  readonly selector?: string;
  readonly schedule?: ScheduleConfig;
  readonly secrets?: SecretsConfig;
  readonly notifications?: NotificationsConfig;
  readonly orphans?: "report" | "deactivate";
  /** Its owner (docs/user/teams.md); absent: the top level's, else its name. */
  readonly owner?: string;
  /** Its own repository (a team's: docs/user/teams.md); absent: the top level's. */
  readonly source?: SourceConfig;
  /** An explicit state; absent: the top-level state, namespaced by the name. */
  readonly state?: StateConfig;
  readonly patches: readonly PatchSource[];
  /** What it applies (`track:`); absent: the top level's git ref. */
  readonly track?: TrackSetting;
  /** How a revision moves here: `soak`, `promotion` (promotion-section.ts). */
  readonly promotion: PromotionSettings;
  /** When it may apply (windows-section.ts). */
  readonly windows?: readonly SyncWindow[];
}

type Raw = Record<string, unknown>;

/** The state an environment gets when it names none: the top-level one, namespaced by its name. */
export function namespacedState(state: StateConfig, name: string): StateConfig {
  if (state.backend === "postgres") return { ...state, schema: `${state.schema}_${name.replaceAll("-", "_")}` };
  const ext = path.extname(state.path);
  const base = ext === "" ? state.path : state.path.slice(0, -ext.length);
  return { ...state, path: `${base}.${name}${ext}` };
}

const stateKey = (s: StateConfig): string => (s.backend === "postgres" ? `postgres:${s.urlEnv}/${s.schema}` : `sqlite:${s.path}`);

/** `values:` (top level or an environment's), after the schema: name → string, number or boolean. */
export function valuesFromDocument(raw: unknown): Readonly<Record<string, EnvironmentValue>> {
  const values: Record<string, EnvironmentValue> = {};
  if (raw === null || typeof raw !== "object") return values;
  for (const [name, value] of Object.entries(raw as Raw)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") values[name] = value;
  }
  return values;
}

function patchSources(raw: unknown, name: string, resolve: (p: string) => string): PatchSource[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((item: unknown, i): PatchSource => {
    const at = `environments.${name}.patches[${i}]`;
    return typeof item === "string" ? { type: "file", file: resolve(item), written: item, at } : { type: "inline", document: item as Raw, at };
  });
}

/** Builds the typed `environments:` from a document that passed the schema, in the file's order. */
export function environmentsFromDocument(raw: Raw, resolve: (p: string) => string, file: string | undefined): EnvironmentDefinition[] {
  return Object.entries(raw).map(([name, value]) => {
    const e = (value ?? {}) as Raw;
    const notifications = notificationsFromDocument(e.notifications);
    const track = trackFromDocument(e.track);
    return {
      name,
      values: valuesFromDocument(e.values),
      patches: patchSources(e.patches, name, resolve),
      promotion: promotionFromDocument(e),
      windows: windowsFromDocument(e.windows),
      ...(e.targets === undefined ? {} : { targets: targetsConfig(e.targets as Raw) }),
      ...(typeof e.selector === "string" ? { selector: e.selector } : {}),
      ...(e.schedule === undefined ? {} : { schedule: scheduleConfig(e.schedule as Raw) }),
      ...(e.secrets === undefined ? {} : { secrets: secretsConfig(e.secrets as Raw, resolve) }),
      ...(notifications === undefined ? {} : { notifications }),
      ...(e.orphans === "deactivate" || e.orphans === "report" ? { orphans: e.orphans } : {}),
      ...(typeof e.owner === "string" ? { owner: e.owner } : {}),
      ...(e.source === undefined ? {} : { source: sourceConfig(e.source as Raw, resolve) }),
      ...(e.state === undefined ? {} : { state: stateConfig(e.state as Raw, resolve, file) }),
      ...(track === undefined ? {} : { track }),
    };
  });
}

/**
 * What the schema cannot say of `environments:`: each selector parses, each patch file lies
 * inside the config's directory, and an environment that applies has targets (its own or the
 * top level's). Located at the setting (`locate` maps a path in the document to line:column).
 */
export function environmentProblems(
  doc: Raw,
  baseDir: string,
  file: string,
  locate: (p: readonly PathSegment[]) => { line?: number; column?: number },
): Diagnostic[] {
  if (doc.environments === null || typeof doc.environments !== "object") return [];
  const problems: Diagnostic[] = [];
  const problem = (p: PathSegment[], message: string, hint: string): void => {
    problems.push({ severity: "error", code: ErrorCode.CONFIG_INVALID, file, path: formatPath(p), ...locate(p), message, hint });
  };
  const resolve = (p: string): string => path.resolve(baseDir, p);
  const top = stateConfig((doc.state ?? { backend: "sqlite" }) as Raw, resolve, file);
  const states = new Map<string, string>();
  problems.push(...promotionChainProblems(doc.environments as Raw, file, locate), ...windowProblems(doc.environments as Raw, file, locate));
  for (const [name, value] of Object.entries(doc.environments as Raw)) {
    const e = (value ?? {}) as Raw;
    const key = stateKey(e.state === undefined ? namespacedState(top, name) : stateConfig(e.state as Raw, resolve, file));
    const other = states.get(key);
    if (other !== undefined)
      problem(
        ["environments", name, "state"],
        `environments ${other} and ${name} share one state`,
        "each environment needs its own state: leave `state:` out (it is namespaced by the name) or name another",
      );
    states.set(key, name);
    if (e.targets === undefined && doc.targets === undefined) {
      problem(["environments", name], `environment ${name} has no targets`, "give it `targets:`, or give the top level `targets:` every environment shares");
    }
    if (typeof e.selector === "string") {
      try {
        parseSelector(e.selector);
      } catch (err) {
        problem(["environments", name, "selector"], (err as GatesyncError).message, (err as GatesyncError).hint ?? "see docs/user/operations.md");
      }
    }
    const patches = Array.isArray(e.patches) ? (e.patches as unknown[]) : [];
    patches.forEach((item, i) => {
      if (typeof item === "string" && !isInside(path.resolve(baseDir, item), baseDir)) {
        problem(
          ["environments", name, "patches", i],
          `patch file ${item} lies outside the directory of gatesync.yaml`,
          "keep overlay patches beside gatesync.yaml",
        );
      }
    });
  }
  return problems;
}
