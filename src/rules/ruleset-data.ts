/**
 * A repository's ruleset file read as data: parsed with gatesync's reader, every local file it
 * `extends` read the same way, each checked member by member (ruleset-checks.ts) before
 * anything is built of it. Nothing is fetched and no file outside the boundary (the directory
 * of gatesync.yaml) is read, through a link neither.
 */
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import { isInside, toPosix } from "../file-paths.js";
import { Locator } from "../load/yaml-locator.js";
import { decodeText, parseYaml } from "../load/yaml-reader.js";
import { extendedNames, rulesetFileProblems } from "./ruleset-checks.js";
import { withoutCustomFunctions } from "./custom-function-skip.js";
import type { RulesetData } from "./ruleset-definition.js";

export interface ReadOptions {
  /** Nothing outside it is read (the directory of gatesync.yaml). */
  readonly boundary: string;
  readonly allowCustomFunctions: boolean;
  /** A merge-request job's: the rules calling custom functions are skipped (custom-function-skip.ts), each with a note. */
  readonly skipCustomFunctions?: boolean;
}

/** A ruleset file that cannot be read at all (missing, outside the boundary): said at the config's key. */
export class RulesetUnreadable extends Error {}

/** Located findings in the ruleset files (CONFIG_INVALID). */
export class RulesetInvalid extends Error {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(diagnostics.map((d) => d.message).join("; "));
  }
}

const shownPath = (file: string): string => toPosix(path.relative(process.cwd(), file));

/** The refusal of a file outside the boundary. */
export const outsideRefusal = (file: string, boundary: string): string =>
  `\`${file}\` lies outside ${boundary}: a ruleset reads files beside gatesync.yaml only`;

/** A file's text, read inside the boundary only (through a link neither), decoded: RulesetUnreadable or RulesetInvalid when it cannot be. */
export async function readInside(file: string, boundary: string): Promise<string> {
  if (!isInside(path.resolve(file), boundary)) throw new RulesetUnreadable(outsideRefusal(file, boundary));
  const real = await realpath(file).catch(() => {
    throw new RulesetUnreadable(`no ruleset file at ${file}`);
  });
  if (!isInside(real, await realpath(boundary))) throw new RulesetUnreadable(`\`${file}\` leads outside ${boundary} (a link)`);
  const decoded = decodeText(await readFile(real), shownPath(file));
  if ("diagnostic" in decoded) throw new RulesetInvalid([{ ...decoded.diagnostic, code: ErrorCode.CONFIG_INVALID }]);
  return decoded.text;
}

/** One file parsed and checked: its value, or its located findings. */
function parsedAndChecked(text: string, file: string, opts: ReadOptions): { value: unknown; problems: Diagnostic[]; notes: Diagnostic[] } {
  const shown = shownPath(file);
  const parsed = parseYaml(text, shown);
  if (parsed.diagnostics.length > 0) {
    return {
      value: undefined,
      problems: parsed.diagnostics.map((d) => ({ ...d, code: ErrorCode.CONFIG_INVALID, message: `ruleset: ${d.message}` })),
      notes: [],
    };
  }
  const locator = new Locator(new Map([[shown, text]]));
  const { value, skipped } =
    opts.skipCustomFunctions === true ? withoutCustomFunctions(parsed.documents[0]?.value) : { value: parsed.documents[0]?.value, skipped: [] };
  const notes = skipped.map((s): Diagnostic => ({
    severity: "info",
    code: ErrorCode.CONFIG_SETTING_IGNORED,
    // a rule's: reported with the rules' findings (a plan prints those)
    rule: s.name,
    file: shown,
    path: formatPath(s.at),
    ...(locator.locate(shown, 0, s.at) ?? {}),
    message: `ruleset: the rule \`${s.name}\` calls a custom function: a merge-request job loads no JavaScript from the merge request, so it is skipped here; the daemon runs it after the merge (where its own gatesync.yaml sets rules.allowCustomFunctions)`,
  }));
  const functionFile = (dir: string, name: string): string => toPosix(path.relative(opts.boundary, path.resolve(path.dirname(file), dir, `${name}.js`)));
  const found = rulesetFileProblems(value, { allowCustomFunctions: opts.allowCustomFunctions, functionFile });
  const problems = found.map((p): Diagnostic => ({
    severity: "error",
    code: ErrorCode.CONFIG_INVALID,
    file: shown,
    ...(p.at.length === 0 ? {} : { path: formatPath(p.at) }),
    ...(locator.locate(shown, 0, p.at) ?? {}),
    message: `ruleset: ${p.message}`,
    hint: "fix the ruleset: see https://docs.stoplight.io/docs/spectral/ for its format and docs/user/rules.md for what gatesync accepts",
  }));
  return { value, problems, notes };
}

/** Whether a file lists custom functions (then, with allowCustomFunctions, Spectral's migrator builds it). */
const listsFunctions = (value: unknown): boolean => value !== null && typeof value === "object" && "functions" in value;

/**
 * The ruleset `entry` and every local file it extends, as data. Throws RulesetInvalid (located
 * findings) or RulesetUnreadable. `customFunctions`: some file lists functions (allowed).
 */
export async function readRulesetData(entry: string, opts: ReadOptions): Promise<{ data: RulesetData; customFunctions: boolean; notes: Diagnostic[] }> {
  const files: Record<string, unknown> = {};
  const problems: Diagnostic[] = [];
  const notes: Diagnostic[] = [];
  const pending = [path.resolve(entry)];
  let customFunctions = false;
  for (let file = pending.shift(); file !== undefined; file = pending.shift()) {
    if (Object.hasOwn(files, file)) continue;
    const checked = parsedAndChecked(await readInside(file, opts.boundary), file, opts);
    files[file] = checked.value;
    problems.push(...checked.problems);
    notes.push(...checked.notes);
    customFunctions ||= listsFunctions(checked.value);
    if (checked.problems.length === 0) for (const name of extendedNames(checked.value)) pending.push(path.resolve(path.dirname(file), name));
  }
  if (problems.length > 0) throw new RulesetInvalid(problems);
  return { data: { entry: path.resolve(entry), files }, customFunctions, notes };
}
