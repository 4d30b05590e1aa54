/**
 * Who decides each setting of gatesync.yaml (docs/user/configuration.md; `x-owner` in
 * schemas/gatesync-config.schema.json, which test/config/settings-owners.test.ts holds these
 * lists to):
 *
 * - the team's settings — `values`, `selector`, `rules` and each environment's `values`,
 *   `selector` and `patches` — are read by the daemon from the repository, at the commit it
 *   validates, plans and applies;
 * - the operator's — everything else: where gatesync applies and with which credentials, the
 *   state, the server, the secret scope, orphans and the deactivation guard, the schedule,
 *   notifications, retries, limits, whether rulesets may run code, and which environments
 *   exist — only from the daemon's own configuration.
 *
 * A commit can never widen its own authority: an operator setting written in the repository's
 * file has no effect on the daemon, which says so (`ignoredSettings`) where it differs.
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";
import { stripUrlCredentials } from "../secrets/credentials.js";

/** The team's settings at the top level of gatesync.yaml. */
export const topLevelTeamSettings: readonly string[] = ["values", "selector", "rules"];
/** The team's settings of one entry of `environments:`. */
export const environmentTeamSettings: readonly string[] = ["values", "selector", "patches"];
/** The operator's settings at the top level (`environments` aside: its entries are split by the lists of an entry). */
export const topLevelOperatorSettings: readonly string[] = [
  "source",
  "targets",
  "retries",
  "state",
  "history",
  "schedule",
  "orphans",
  "owner",
  "deactivationGuard",
  "telemetry",
  "notifications",
  "server",
  "secrets",
  "limits",
];
/** The operator's settings of one entry of `environments:`. */
export const environmentOperatorSettings: readonly string[] = [
  "targets",
  "windows",
  "schedule",
  "secrets",
  "notifications",
  "orphans",
  "owner",
  "source",
  "state",
  "track",
  "soak",
  "promotion",
];
/**
 * Inside the team's `rules`, the settings that stay the operator's: whether a ruleset may run code
 * inside gatesync, and how long the rules may run (a commit must not lift its own time budget).
 */
export const operatorRuleSettings: readonly string[] = ["documentTimeout", "runTimeout", "allowCustomFunctions"];
/** Not settings: the document's type. */
const documentKeys: readonly string[] = ["apiVersion", "kind"];

type Raw = Readonly<Record<string, unknown>>;

/** One leaf of a document: its path and value (a list is one leaf). */
interface Leaf {
  readonly path: readonly PathSegment[];
  readonly value: unknown;
}

const isMapping = (v: unknown): v is Raw => v !== null && typeof v === "object" && !Array.isArray(v);

function leavesOf(value: unknown, at: readonly PathSegment[]): Leaf[] {
  if (!isMapping(value)) return [{ path: at, value }];
  return Object.entries(value).flatMap(([k, v]) => leavesOf(v, [...at, k]));
}

function valueAt(doc: unknown, at: readonly PathSegment[]): unknown {
  let here: unknown = doc;
  for (const key of at) here = isMapping(here) ? here[String(key)] : undefined;
  return here;
}

const canonical = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (isMapping(x) ? Object.fromEntries(Object.entries(x).sort()) : x));

/** A value in force, as a warning shows it: the user information of a URL left out, long values cut. */
function shown(value: unknown): string {
  if (value === undefined) return "not set (its default)";
  const text = stripUrlCredentials(typeof value === "string" ? value : JSON.stringify(value));
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** The operator settings a repository's document writes: each leaf, with where the operator's value in force is looked up. */
function operatorLeaves(repo: Raw): Array<Leaf & { readonly inForceAt: ReadonlyArray<readonly PathSegment[]> }> {
  const leaves: Array<Leaf & { readonly inForceAt: ReadonlyArray<readonly PathSegment[]> }> = [];
  for (const [key, value] of Object.entries(repo)) {
    if (documentKeys.includes(key) || key === "environments") continue;
    const own = key === "rules" ? leavesOf(value, [key]).filter((l) => operatorRuleSettings.includes(String(l.path[1]))) : [];
    const all = topLevelTeamSettings.includes(key) ? own : leavesOf(value, [key]);
    for (const leaf of all) leaves.push({ ...leaf, inForceAt: [leaf.path] });
  }
  const environments = isMapping(repo.environments) ? repo.environments : {};
  for (const [name, entry] of Object.entries(environments)) {
    for (const [key, value] of Object.entries(isMapping(entry) ? entry : {})) {
      if (environmentTeamSettings.includes(key)) continue;
      // an environment that does not set it has the top level's
      for (const leaf of leavesOf(value, ["environments", name, key])) leaves.push({ ...leaf, inForceAt: [leaf.path, leaf.path.slice(2)] });
    }
  }
  return leaves;
}

export interface SettingsFile {
  /** The file as shown: named from the repository's root. */
  readonly file: string;
  /** Line and column of a path in it. */
  readonly locate: (at: readonly PathSegment[]) => { line?: number; column?: number };
  /**
   * Whether the file, as a local run loads it, stays valid without the setting at `at`: the
   * hint says to remove only what can go (a local run of the file needs `source`, a target's `url` …).
   */
  readonly removable: (at: readonly PathSegment[]) => boolean;
}

/**
 * The hint of an ignored setting: one a developer can follow without breaking the repository's
 * file (issue 55) — remove the setting (with the section it alone fills: `track.branch` goes
 * with its `track`) where the file stays valid without it, else keep it.
 */
function operatorHint(repo: Raw, at: readonly PathSegment[], where: SettingsFile): string {
  const ask = "to change the daemon's value, ask the operator to set it in the daemon's configuration";
  const shortest = at[0] === "environments" ? 3 : 1;
  let section = at;
  while (section.length > shortest) {
    const parent = valueAt(repo, section.slice(0, -1));
    if (!isMapping(parent) || Object.keys(parent).length !== 1) break;
    section = section.slice(0, -1);
  }
  if (where.removable(section)) return `if it was meant for the daemon, remove \`${formatPath(section)}\` from ${where.file} (the file stays valid); ${ask}`;
  return `keep it: local runs of ${where.file} need it, and the daemon keeps its own value; ${ask}`;
}

/** A copy of `doc` without the leaf at `at`. */
export function withoutPath(doc: Raw, at: readonly PathSegment[]): Raw {
  const [head, ...rest] = at;
  const key = String(head);
  if (rest.length === 0) return Object.fromEntries(Object.entries(doc).filter(([k]) => k !== key));
  const inner = doc[key];
  return isMapping(inner) ? { ...doc, [key]: withoutPath(inner, rest) } : doc;
}

/**
 * The repository's operator settings that differ from the operator's (each a located note
 * naming the setting and the value in force, with a hint that keeps the file valid), and its
 * environments the operator does not configure (reported; the daemon skips them). Info, not
 * warnings: nothing is wrong with the commit, the daemon just does not take them.
 */
export function ignoredSettings(repo: Raw, operator: Raw, where: SettingsFile): Diagnostic[] {
  const findings: Diagnostic[] = [];
  const note = (at: readonly PathSegment[], message: string, hint: string): void => {
    findings.push({ severity: "info", code: ErrorCode.CONFIG_SETTING_IGNORED, file: where.file, path: formatPath(at), ...where.locate(at), message, hint });
  };
  const configured = isMapping(operator.environments) ? operator.environments : {};
  const skipped = new Set<string>();
  for (const name of Object.keys(isMapping(repo.environments) ? repo.environments : {})) {
    if (name in configured) continue;
    skipped.add(name);
    note(
      ["environments", name],
      `environment ${name} is not one the daemon runs: it is skipped (the daemon runs ${Object.keys(configured).join(", ") || "one environment, default"})`,
      "which environments exist is the operator's decision: ask for it in the daemon's configuration; the environment still serves local runs of this file",
    );
  }
  for (const leaf of operatorLeaves(repo)) {
    if (leaf.path[0] === "environments" && skipped.has(String(leaf.path[1]))) continue;
    const inForce = leaf.inForceAt.map((at) => valueAt(operator, at)).find((v) => v !== undefined);
    if (canonical(inForce) === canonical(leaf.value)) continue;
    note(
      leaf.path,
      `${formatPath(leaf.path)} is an operator setting: the daemon ignores it and keeps its own, ${shown(inForce)}`,
      operatorHint(repo, leaf.path, where),
    );
  }
  return findings;
}

/**
 * What a daemon reads of a repository's settings file: its team settings only — the operator's,
 * `track:` among them, are ignored (and said by `ignoredSettings`), never checked against the
 * daemon's config nor able to make the commit invalid. A key the schema does not know stays, so
 * a misspelt team setting is still refused, located.
 */
export function teamDocumentOf(doc: Raw): Raw {
  const top: Record<string, unknown> = Object.fromEntries(Object.entries(doc).filter(([k]) => !topLevelOperatorSettings.includes(k)));
  if (isMapping(top.rules)) top.rules = Object.fromEntries(Object.entries(top.rules).filter(([k]) => !operatorRuleSettings.includes(k)));
  if (!isMapping(doc.environments)) return top;
  const environments = Object.entries(doc.environments).map(([name, entry]) => [
    name,
    isMapping(entry) ? Object.fromEntries(Object.entries(entry).filter(([k]) => !environmentOperatorSettings.includes(k))) : entry,
  ]);
  return { ...top, environments: Object.fromEntries(environments) };
}

/** The team's settings a document writes (their paths): in the daemon's own file, what the repository's file replaces. */
export function teamSettingsIn(doc: Raw): string[] {
  const found = Object.keys(doc).filter((k) => topLevelTeamSettings.includes(k));
  for (const [name, entry] of Object.entries(isMapping(doc.environments) ? doc.environments : {})) {
    found.push(
      ...Object.keys(isMapping(entry) ? entry : {})
        .filter((k) => environmentTeamSettings.includes(k))
        .map((k) => `environments.${name}.${k}`),
    );
  }
  return found;
}
