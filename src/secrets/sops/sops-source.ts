/**
 * `${sops:PATH#KEY.PATH}` (one value of a SOPS file) and `${sops:PATH}` (a file of one value):
 * each file is read, its key paths checked, and decrypted and verified once per run, on first
 * use; its plaintext is held in memory for the run only, and never written anywhere. Without an
 * age identity the structure and the key path are still checked (a merge request's job).
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { ageIdentities, ageKeySources, unwrapDataKeys, unwrapDataKeysAway, unwrapDataKeysHere } from "./sops-age.js";
import type { AgeKeySettings, WrappedKey } from "./sops-age.js";
import { SopsProblem } from "./sops-format.js";
import type { SopsCode } from "./sops-format.js";
import { checkSopsStructure, decryptSopsFile, leavesOf, nodeAt, parseSopsFile } from "./sops-tree.js";
import type { SopsFile, SopsNode, ValueParse } from "./sops-tree.js";
import { describeFinding } from "./sops-findings.js";
import type { SopsFinding } from "./sops-findings.js";

/**
 * What a SOPS file and a run may cost, checked before any data key is unwrapped
 * (docs/user/secrets.md#bounds). The list of age recipients is outside the file's MAC: anyone who
 * can commit can add stanzas, each an X25519 trial for each identity (36,000 junk stanzas in four
 * files kept a daemon's /healthz unanswered for 20–29 s of every run).
 */
export const sopsBounds = {
  /** Bytes of one file, refused before it is read. */
  maxFileBytes: 1024 * 1024,
  /** Age recipients (`sops.age` stanzas) of one file: sops writes one per recipient. */
  maxStanzas: 64,
  /** Trials (stanzas × identities) one run unwraps, over all its files. */
  maxTrialsPerRun: 4096,
  /** Trials a prefetch spends on the caller's thread (a few milliseconds); more are the age thread's. */
  onLoopTrials: 64,
} as const;

/**
 * `sealed`: the fingerprint of the value as encrypted (its `ENC[…]` text, public in the
 * repository), which a plan without keys compares instead of the value (sealed-values.ts).
 */
export type SopsAnswer =
  | { readonly ok: true; readonly value: string; readonly sealed: string }
  | { readonly ok: false; readonly code: SopsCode; readonly message: string; readonly sealed?: string };

/** `PATH#KEY.PATH` split: the file and the key path within it (none: the whole-file form). */
export function splitSopsName(name: string): { readonly file: string; readonly keyPath: readonly string[] | undefined } {
  const hash = name.indexOf("#");
  if (hash < 0) return { file: name, keyPath: undefined };
  return { file: name.slice(0, hash), keyPath: name.slice(hash + 1).split(".") };
}

/** A file of the run: read (or refused), then its data key unwrapped, then decrypted and verified (or refused). */
interface Read {
  readonly file?: SopsFile;
  /** Not as sops writes it (read or structure): nothing of it is used, its key paths unchecked. */
  readonly invalid?: SopsProblem;
  /** Its data key not unwrapped, or its values not verified. */
  problem?: SopsProblem;
  key?: Buffer;
  plain?: SopsNode;
}

/** The SOPS files of one run, each read and decrypted at most once. */
export class SopsFiles {
  readonly #files = new Map<string, Read>();
  readonly #warned = new Set<string>();
  #identities: string[] | undefined;
  /** Trials asked so far this run (sopsBounds.maxTrialsPerRun). */
  #trials = 0;

  /** `fast`: the value-only parse of a file's text (sops-tree.ts parseSopsFile); without it, `yaml` reads every file. */
  constructor(
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly keys?: AgeKeySettings,
    private readonly fast?: ValueParse,
  ) {}

  /**
   * Unwraps the data keys of the files at `reals` on this thread, together, before they are
   * looked up (validation names every reference of the repository first): a run so prepared
   * starts no age thread. Reports nothing: each lookup does.
   */
  async prefetch(reals: readonly string[]): Promise<void> {
    if (this.identities().length === 0) return;
    const wanted = [...new Set(reals)].map((real) => this.read(real)).filter((r) => r.invalid === undefined && r.problem === undefined && r.key === undefined);
    const before = this.#trials;
    const reads = this.withinBudget(wanted);
    if (reads.length === 0) return;
    // a few trials here; more in the age thread, awaited, so the daemon's event loop keeps answering
    const unwrap = this.#trials - before <= sopsBounds.onLoopTrials ? unwrapDataKeysHere : unwrapDataKeysAway;
    try {
      this.settle(reads, await unwrap(reads.map(wrappedKey), this.identities(), ageKeySources(this.keys)));
    } catch {
      // left to the lookups, which unwrap what is missing in the age thread and say what fails
    }
  }

  /** Keys of files a lookup needs now: in the age thread, waited for. */
  private unlock(reads: readonly Read[]): void {
    const within = this.withinBudget(reads);
    if (within.length > 0) this.settle(within, unwrapDataKeys(within.map(wrappedKey), this.identities(), ageKeySources(this.keys)));
  }

  /**
   * The reads whose trials fit in what is left of the run's budget, charged; the others refused
   * before anything is unwrapped (SOPS_UNWRAP_BUDGET), so no file can spend another's share twice.
   */
  private withinBudget(reads: readonly Read[]): Read[] {
    const identities = Math.max(1, this.identities().length);
    return reads.filter((r) => {
      const trials = r.file!.meta.age.length * identities;
      if (this.#trials + trials <= sopsBounds.maxTrialsPerRun) {
        this.#trials += trials;
        return true;
      }
      r.problem = new SopsProblem(
        "SOPS_UNWRAP_BUDGET",
        `unwrapping its data key (${r.file!.meta.age.length} age stanza(s) × ${identities} identit${identities === 1 ? "y" : "ies"}) is past this run's bound of ${sopsBounds.maxTrialsPerRun} trials (sopsBounds.maxTrialsPerRun), ${this.#trials} spent on the files before it`,
      );
      return false;
    });
  }

  private settle(reads: readonly Read[], keys: ReadonlyArray<Buffer | SopsProblem>): void {
    reads.forEach((r, i) => {
      const key = keys[i]!;
      if (key instanceof SopsProblem) r.problem = key;
      else r.key = key;
    });
  }

  /** The file's values decrypted and verified, once; its problem thrown (and kept) otherwise. */
  private plain(read: Read): SopsNode {
    if (read.plain !== undefined) return read.plain;
    if (read.key === undefined && read.problem === undefined) this.unlock([read]);
    if (read.problem !== undefined) throw read.problem;
    try {
      return (read.plain = decryptSopsFile(read.file!, read.key!));
    } catch (error) {
      if (error instanceof SopsProblem) read.problem = error;
      throw error;
    }
  }

  /** The value at `keyPath` of the file at real path `real`, named `shown` in messages. */
  value(real: string, shown: string, keyPath: readonly string[] | undefined): SopsAnswer {
    const read = this.read(real);
    let sealed: string | undefined;
    try {
      if (read.file === undefined || read.invalid !== undefined) throw read.invalid!;
      const at = keyPath === undefined ? undefined : keyPath.join(".");
      const leafPath = keyPath ?? this.onlyLeaf(read.file.tree);
      const encrypted = nodeAt(read.file.tree, leafPath);
      if (encrypted === undefined || !("leaf" in encrypted)) {
        throw new SopsProblem("SOPS_KEY_PATH", `${encrypted === undefined ? "no value" : "a mapping or a list, not one value,"} at ${at ?? "(root)"}`);
      }
      sealed = fingerprint(leafPath, encrypted.leaf);
      const leaf = nodeAt(this.plain(read), leafPath);
      return { ok: true, value: leaf !== undefined && "leaf" in leaf && leaf.leaf !== null ? String(leaf.leaf) : "", sealed };
    } catch (error) {
      if (!(error instanceof SopsProblem)) throw error;
      return { ok: false, code: error.code, message: `${shown}: ${error.message}`, ...(sealed === undefined ? {} : { sealed }) };
    }
  }

  private onlyLeaf(tree: SopsNode): readonly string[] {
    const leaves = leavesOf(tree);
    if (leaves.length !== 1) throw new SopsProblem("SOPS_KEY_PATH", `the file holds ${leaves.length} values: name one with #KEY.PATH`);
    return leaves[0]!.path;
  }

  private identities(): string[] {
    return (this.#identities ??= ageIdentities(this.env, this.keys));
  }

  /**
   * What validate warns about in each file read so far (sops-findings.ts), said once per file
   * per run; `shown` names a file as the findings do.
   */
  findings(shown: (real: string) => string): Array<SopsFinding & { readonly real: string }> {
    const out: Array<SopsFinding & { readonly real: string }> = [];
    for (const [real, read] of this.#files) {
      if (read.file === undefined || this.#warned.has(real)) continue;
      this.#warned.add(real);
      for (const f of read.file.findings) out.push({ ...describeFinding(f, shown(real), read.file.meta), real });
    }
    return out;
  }

  /** The real paths of the files read so far. */
  filesRead(): string[] {
    return [...this.#files.keys()];
  }

  private read(real: string): Read {
    let read = this.#files.get(real);
    if (read === undefined) this.#files.set(real, (read = readFile(real, this.fast)));
    return read;
  }
}

/**
 * A value's fingerprint as encrypted: its key path and `ENC[…]` text (the iv is random, so a
 * value sops encrypted again — edited, or its data key rotated — has another). Not secret.
 */
function fingerprint(keyPath: readonly string[], encrypted: unknown): string {
  return createHash("sha256")
    .update(`${keyPath.join("\0")}\0${String(encrypted)}`)
    .digest("hex")
    .slice(0, 32);
}

const wrappedKey = (r: Read): WrappedKey => ({ stanzas: r.file!.meta.age, otherKeyTypes: r.file!.meta.otherKeyTypes });

function readFile(real: string, fast: ValueParse | undefined): Read {
  let file: SopsFile | undefined;
  try {
    const size = statSync(real).size;
    if (size > sopsBounds.maxFileBytes)
      return {
        invalid: new SopsProblem(
          "SOPS_TOO_LARGE",
          `the file is ${size} bytes, past the bound of ${sopsBounds.maxFileBytes} bytes of a SOPS file (sopsBounds.maxFileBytes)`,
        ),
      };
    file = parseSopsFile(readFileSync(real, "utf8"), fast);
    const stanzas = file.meta.age.length;
    if (stanzas > sopsBounds.maxStanzas)
      return {
        file,
        invalid: new SopsProblem(
          "SOPS_TOO_LARGE",
          `the file names ${stanzas} age recipients, past the bound of ${sopsBounds.maxStanzas} of a SOPS file (sopsBounds.maxStanzas)`,
        ),
      };
    checkSopsStructure(file);
    return { file };
  } catch (error) {
    // a file whose metadata was read is kept beside its problem: validate locates what is wrong in it
    return {
      ...(file === undefined ? {} : { file }),
      invalid: error instanceof SopsProblem ? error : new SopsProblem("SOPS_INVALID", "the file cannot be read"),
    };
  }
}
