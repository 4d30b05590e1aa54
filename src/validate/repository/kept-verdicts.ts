/**
 * The verdicts of files kept between runs (load/file-cache.ts), for every environment of a
 * daemon at once.
 *
 * A verdict is made under a context: the limits, rulesets and app-type providers every
 * environment shares, and the environment's own values and patches. Most files use no value and
 * no patch names their documents: their verdict is then the same whatever the environment, and
 * is kept once under the shared part of the context (`shared`) for every environment whose
 * patches do not name one of its documents — 20 environments of one repository check such a
 * file once per content, not 20 times, and hold one verdict of it. A verdict that a value or a
 * patch made is kept under the whole context (`own`), for that environment alone.
 *
 * A file new to the file system — the same commit's file in the next commit's checkout — is
 * recognised by its content (its digest, read again): its verdict serves, naming where the file
 * is now.
 */
import { ErrorCode } from "../../errors.js";
import { FileCache } from "../../load/file-cache.js";
import type { MovedEntry } from "../../load/file-cache.js";
import type { SourceFile } from "../../load/list-files.js";
import { fileDigest } from "../../load/read-file.js";
import { LoopTurns } from "../../load/loop-turns.js";
import type { FileCheckContext, FileVerdict } from "../file/check-file.js";

/** Files whose content is read, to tell whether it is unchanged, before the loop is let go (loop-turns.ts). */
const digestsPerTurn = 32;

export interface Keys {
  /** The whole context: a verdict a value or a patch made. */
  readonly own: string;
  /** What every environment shares of it: a verdict no value or patch made. */
  readonly shared: string;
  /** `Kind/name` the context's patches name. */
  readonly patched: ReadonlySet<string>;
}

/** Where a context's verdicts are kept: computed once per run (the context's values and patches are written out). */
export function keysOf(ctx: FileCheckContext): Keys {
  // the rulesets by their hashes: a changed ruleset checks every file again
  const rules = [ctx.rules?.openapi?.hash, ctx.rules?.resources?.hash];
  const { values, patches, ...common } = ctx;
  return {
    own: JSON.stringify({ ...ctx, rules }),
    // whether values are given at all shows in a verdict (valuesUsed), which they are not
    shared: JSON.stringify({ ...common, rules, values: values !== undefined }),
    patched: new Set((patches ?? []).map((p) => p.target)),
  };
}

/** A verdict that no value and no patch changed: every environment whose patches leave the file alone gets the same. */
function shareable(v: FileVerdict): boolean {
  return (v.valuesUsed ?? []).length === 0 && v.patchesApplied === undefined && !v.diagnostics.some((d) => d.code === ErrorCode.VALUE_MISSING);
}

/** A shared verdict serves a context none of whose patches names a document of the file. */
const serves = (v: FileVerdict, keys: Keys): boolean => v.targets === undefined || !v.targets.some((t) => keys.patched.has(t));

/**
 * A verdict for the same content at `absolute`: findings name the file by its path, so only what
 * reads it again moves — the file itself, and each document held by reference (a new verdict of
 * the document gets a reference of its own, validate/attachments.ts, which reads the new place).
 */
function movedTo(v: FileVerdict, absolute: string): FileVerdict {
  return { ...v, absolute, documents: v.documents.map((d) => (d.summary === undefined ? d : { ...d })) };
}

interface Pending {
  readonly index: number;
  readonly key: string;
  readonly moved: MovedEntry<FileVerdict>;
}

/** The files a run checks now (`settle` gives each its verdict, or undefined), and those another run is checking. */
export interface Claim {
  /** Indexes (in the files claimed from) of the files this run checks. */
  readonly mine: readonly number[];
  /** The verdicts other runs are making of the rest, by index: undefined when theirs does not serve (this run checks it then). */
  readonly theirs: ReadonlyMap<number, Promise<FileVerdict | undefined>>;
  settle(index: number, verdict: FileVerdict | undefined): void;
  /** Ends the claim: a file left unsettled (a failed check) is told undefined. */
  release(): void;
}

export class KeptVerdicts {
  private readonly cache = new FileCache<FileVerdict>();
  /** Files being checked, by shared key and path: environments running side by side check such a file once. */
  private readonly checking = new Map<string, { readonly absolute: string; readonly verdict: Promise<FileVerdict | undefined> }>();

  /**
   * The files to check of a run (`files`, none kept): those no other run is checking are this
   * run's, the rest wait for the other run's verdict — which serves when no value or patch made it.
   */
  claim(files: readonly SourceFile[], keys: Keys): Claim {
    const mine: number[] = [];
    const theirs = new Map<number, Promise<FileVerdict | undefined>>();
    const settles = new Map<number, (v: FileVerdict | undefined) => void>();
    files.forEach((f, index) => {
      const at = `${keys.shared}\0${f.path}`;
      const other = this.checking.get(at);
      if (other !== undefined && other.absolute === f.absolute) {
        theirs.set(
          index,
          other.verdict.then((v) => (v !== undefined && shareable(v) && serves(v, keys) ? v : undefined)),
        );
        return;
      }
      mine.push(index);
      const verdict = new Promise<FileVerdict | undefined>((resolve) => settles.set(index, resolve));
      const entry = { absolute: f.absolute, verdict };
      this.checking.set(at, entry);
      void verdict.then(() => {
        if (this.checking.get(at) === entry) this.checking.delete(at);
      });
    });
    return {
      mine,
      theirs,
      settle: (index, v) => settles.get(index)?.(v),
      release: () => settles.forEach((resolve) => resolve(undefined)),
    };
  }

  /** The verdict kept for each of `files` under a context (`keys`), undefined where none serves (the file is to be checked). */
  async lookup(files: readonly SourceFile[], keys: Keys): Promise<Array<FileVerdict | undefined>> {
    const found: Array<FileVerdict | undefined> = [];
    const pending: Pending[] = [];
    files.forEach((f, index) => {
      const shared = this.cache.get(keys.shared, f);
      const hit = this.cache.get(keys.own, f) ?? (shared !== undefined && serves(shared, keys) ? shared : undefined);
      found.push(hit);
      if (hit !== undefined) return;
      const own = this.cache.moved(keys.own, f);
      const other = own === undefined ? this.cache.moved(keys.shared, f) : undefined;
      if (own !== undefined) pending.push({ index, key: keys.own, moved: own });
      else if (other !== undefined && serves(other.value, keys)) pending.push({ index, key: keys.shared, moved: other });
    });
    const turns = new LoopTurns(digestsPerTurn);
    for (const { index, key, moved } of pending) {
      await turns.tick();
      const file = files[index]!;
      if (fileDigest(file.absolute) !== moved.digest) continue;
      const here = moved.value.absolute === file.absolute ? moved.value : movedTo(moved.value, file.absolute);
      this.cache.set(key, file, here, moved.digest);
      found[index] = here;
    }
    return found;
  }

  /** Keeps a verdict just made: for every environment when no value or patch made it, else for this context. */
  keep(file: SourceFile, verdict: FileVerdict, keys: Keys): void {
    if (!shareable(verdict)) return this.cache.set(keys.own, file, verdict, verdict.digest);
    this.cache.set(keys.shared, file, verdict, verdict.digest);
    // what a value or patch of this context made of the file before is not what it is now
    this.cache.delete(keys.own, file.path);
  }

  /** Forgets the files not in `present` (their paths). */
  retain(present: ReadonlySet<string>): void {
    this.cache.retain(present);
  }
}
