/**
 * Which state this working copy last applied each environment with: its lineage, kept in
 * `.gatesync/applied-states.json` beside gatesync.yaml (not committed: `gatesync init` lists
 * `.gatesync/` in .gitignore). An apply whose state has another lineage — another file, another
 * PostgreSQL schema, a copy made from another state — is refused (STATE_FOREIGN) unless
 * `--allow-foreign-state`: planned from it, the apply would create again, or undo, what the
 * state it last used records (docs/user/state.md, "Which state an apply trusts").
 */
import { randomUUID } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { ensureDirectory } from "../../ensure-directory.js";
import { KeyedTurns } from "../../keyed-turns.js";
import { ErrorCode, StateError, UsageError } from "../../errors.js";

export interface AppliedLineage {
  readonly lineage: string;
  /** The state as messages name it, when it was last applied with. */
  readonly state: string;
  readonly at: string;
}

type Memory = Readonly<Record<string, AppliedLineage>>;

/** The file, beside gatesync.yaml (the config's directory). */
export const appliedLineageFile = (configDir: string): string => path.join(configDir, ".gatesync", "applied-states.json");

/** A printable line: the file may come from anywhere (a commit that adds it), and its values are printed in messages. */
const printable = (v: unknown, max: number): boolean =>
  typeof v === "string" && v.length <= max && ![...v].some((c) => c < " " || (c >= "\u007f" && c <= "\u009f"));

const isEntry = (v: unknown): v is AppliedLineage =>
  v !== null &&
  typeof v === "object" &&
  typeof (v as AppliedLineage).lineage === "string" &&
  /^[\w-]{1,100}$/.test((v as AppliedLineage).lineage) &&
  printable((v as AppliedLineage).state, 1000) &&
  printable((v as AppliedLineage).at, 40);

async function readMemory(file: string): Promise<Memory> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const environments = (value as { environments?: unknown } | undefined)?.environments;
  if (environments === null || typeof environments !== "object" || Array.isArray(environments) || !Object.values(environments).every(isEntry))
    throw new UsageError(`${file} is not what gatesync writes there (which state each environment was last applied with)`, {
      hint: "delete it: the next apply writes it again",
    });
  return environments as Memory;
}

/** Refuses a state of another lineage than the one `environment` was last applied with here. */
export async function checkAppliedLineage(
  configDir: string,
  environment: string,
  current: { readonly lineage: string; readonly description: string },
  allowForeign: boolean,
): Promise<void> {
  const file = appliedLineageFile(configDir);
  const last = (await readMemory(file))[environment];
  // a state never written has no lineage yet: whether it may be applied from is the empty check's
  if (last === undefined || current.lineage === "" || last.lineage === current.lineage || allowForeign) return;
  throw new StateError(
    ErrorCode.STATE_FOREIGN,
    `the state is not the one environment ${environment} was last applied with from here: ${current.description} has lineage ${current.lineage}; the last apply (${last.at}) used ${last.state}, lineage ${last.lineage} (${path.relative(process.cwd(), file) || file})`,
    {
      hint: `point gatesync.yaml's \`state\` back at the state of lineage ${last.lineage}; if this state is the one to apply with from now on (it holds what was applied), pass --allow-foreign-state once`,
    },
  );
}

/** This process's writes of each file, one after another: two environments' applies at once each keep the other's entry. */
const writes = new KeyedTurns();

/**
 * Remembers the lineage `environment` was applied with (a state given its lineage by this apply
 * included). The file is written whole under a name of this write's own, then renamed: a reader
 * never sees half a file, and two writers never write into one (applies of 40 environments at once
 * in one process once left a file of two interleaved ones, which refused every apply after them).
 * Two processes writing at the same instant may each miss the other's new entry: that
 * environment's next apply writes it again.
 */
export async function rememberAppliedLineage(configDir: string, environment: string, entry: AppliedLineage): Promise<void> {
  if (entry.lineage === "") return;
  const file = appliedLineageFile(configDir);
  await writes.run(file, async () => {
    const memory = await readMemory(file).catch(() => ({}));
    await ensureDirectory(path.dirname(file));
    const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ environments: { ...memory, [environment]: entry } }, null, 2)}\n`);
    await rename(temporary, file);
  });
}
