/**
 * The secret source gatesync plans and applies with: `${env:NAME}` from an environment, and
 * `${file:PATH}` and `${sops:PATH#KEY.PATH}` from files inside one directory (secrets.fileRoot),
 * which they may not leave (a SOPS file is found exactly as `${file:}` finds its file).
 */
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { isInside } from "../file-paths.js";
import { formatRef } from "./references.js";
import type { SecretRef } from "./references.js";
import { registerSecret } from "./redaction.js";
import type { SecretLookup, SecretSource } from "./resolver.js";
import { envRefusal, fileRefusal } from "./scope.js";
import { SopsFiles, splitSopsName } from "./sops/sops-source.js";
import type { SopsFinding } from "./sops/sops-findings.js";
import type { ValueParse } from "./sops/sops-tree.js";
import { isSealedPlaceholder, sealedPlaceholder } from "./sealed-values.js";
import type { SecretScope } from "./scope.js";

/**
 * A directory references read files below. `shown`: how messages name it (a commit's directory
 * from the repository's root, not the checkout's path). `within`: the checkout of the commit it
 * lies in (source/secret-roots.ts) — it may not leave that either, not even through a link, and
 * the daemon's own files are not in it (the scope's reserved files are the daemon's disk).
 */
export interface SecretRoot {
  readonly dir: string;
  readonly shown?: string;
  readonly within?: string;
}

/** Where `${file:}` and where `${sops:}` resolve: one directory, or each its own (a git source's). */
export interface SecretRoots {
  readonly file: SecretRoot;
  readonly sops: SecretRoot;
}

/**
 * Reads secrets from an environment and from files below one directory, within a scope (see
 * scope.ts; without one, everything resolves: library use and tests). Every value read
 * is registered with the redaction layer.
 */
export class EnvFileSecretSource implements SecretSource {
  readonly #sops: SopsFiles;
  /**
   * Real paths resolved so far (undefined: none there), and the files found in scope by their
   * names: one source serves one run, and 1,000 references to 50 files were 4,000 realpath
   * calls and 2,000 scope checks (~100 ms).
   */
  readonly #realPaths = new Map<string, string | undefined>();
  readonly #located = new Map<string, { ok: true; real: string }>();
  readonly #roots: SecretRoots;

  /**
   * `withoutIdentity: "placeholder"` (a plan that sends nothing: `gatesync plan`): a SOPS value
   * no age identity is given for resolves to its placeholder (sealed-values.ts) instead of
   * SOPS_NO_IDENTITY, so the plan compares it by its encrypted form. `sopsParse`: the value-only
   * parse SOPS files are read with where it is sure (load/fast-yaml.ts oneDocumentFast).
   */
  constructor(
    private readonly env: Readonly<Record<string, string | undefined>>,
    fileRoot: string | SecretRoots,
    private readonly scope?: SecretScope,
    private readonly options: { readonly withoutIdentity?: "refuse" | "placeholder"; readonly sopsParse?: ValueParse } = {},
  ) {
    this.#sops = new SopsFiles(env, scope?.sopsKeys, options.sopsParse);
    this.#roots = typeof fileRoot === "string" ? { file: { dir: fileRoot }, sops: { dir: fileRoot } } : fileRoot;
  }

  lookup(ref: SecretRef): SecretLookup {
    const found = this.read(ref);
    if (found.ok && !isSealedPlaceholder(found.value)) registerSecret(found.value);
    return found;
  }

  async prefetch(refs: readonly SecretRef[]): Promise<void> {
    const files: string[] = [];
    for (const ref of refs) {
      if (ref.provider !== "sops") continue;
      const found = this.locate(ref, splitSopsName(ref.name).file, this.#roots.sops);
      if (found.ok) files.push(found.real);
    }
    await this.#sops.prefetch(files);
  }

  sopsFindings(shown: (real: string) => string): ReadonlyArray<SopsFinding & { readonly real: string }> {
    return this.#sops.findings(shown);
  }

  /** The real paths of the SOPS files the references read so far (validate asks git whether it ignores them). */
  sopsFilesRead(): string[] {
    return this.#sops.filesRead();
  }

  /** Where `${sops:}` resolves (validate warns about a SOPS file outside it). */
  secretsDirectory(): string {
    const { dir } = this.#roots.sops;
    return this.realPath(dir) ?? path.resolve(dir);
  }

  private realPath(target: string): string | undefined {
    if (!this.#realPaths.has(target)) {
      let real: string | undefined;
      try {
        real = realpathSync(target);
      } catch {
        real = undefined;
      }
      this.#realPaths.set(target, real);
    }
    return this.#realPaths.get(target);
  }

  private read(ref: SecretRef): SecretLookup {
    if (ref.provider === "env") {
      const refused = this.scope === undefined ? undefined : envRefusal(this.scope, ref.name);
      if (refused !== undefined) return { ok: false, reason: "scope", ...refused };
      const value = this.env[ref.name];
      return value === undefined ? { ok: false, reason: "missing", message: `environment variable ${ref.name} is not set` } : { ok: true, value };
    }
    if (ref.provider === "sops") return this.readSops(ref);
    const found = this.locate(ref, ref.name, this.#roots.file);
    if (!found.ok) return found;
    try {
      // A trailing newline is almost always an artefact of how the file was written.
      return { ok: true, value: readFileSync(found.real, "utf8").replace(/\r?\n$/, "") };
    } catch {
      return { ok: false, reason: "unreadable", message: `secret file ${ref.name} cannot be read` };
    }
  }

  private readSops(ref: SecretRef): SecretLookup {
    const { file, keyPath } = splitSopsName(ref.name);
    const found = this.locate(ref, file, this.#roots.sops);
    if (!found.ok) return found;
    const got = this.#sops.value(found.real, file, keyPath);
    if (got.ok) return got;
    // without an identity the file is still checked; its value is missing here, not wrong
    if (got.code === "SOPS_NO_IDENTITY" && got.sealed !== undefined && this.options.withoutIdentity === "placeholder") {
      return { ok: true, value: sealedPlaceholder(got.sealed), sealed: got.sealed };
    }
    if (got.code === "SOPS_NO_IDENTITY") return { ok: false, reason: "missing", code: got.code, message: got.message };
    return { ok: false, reason: "sops", code: got.code, message: got.message };
  }

  /**
   * The real path of `file` below the root, inside the scope: found exactly so for `${file:}`
   * and `${sops:}`. A root in a commit's checkout must lie inside it (its real path too), and so
   * must every file read there; the scope's reserved files are the daemon's and not checked there.
   */
  private locate(ref: SecretRef, file: string, root: SecretRoot): { ok: true; real: string } | Exclude<SecretLookup, { ok: true }> {
    const key = `${root.dir}\0${file}`;
    const known = this.#located.get(key);
    if (known !== undefined) return known;
    const shown = root.shown ?? root.dir;
    const escape = (how: string): { ok: false; reason: "escape"; message: string } => ({ ok: false, reason: "escape", message: `${formatRef(ref)} ${how}` });
    const target = path.resolve(root.dir, file);
    if (!isInside(target, root.dir)) return escape(`leaves the secrets directory ${shown}`);
    if (root.within !== undefined && !isInside(root.dir, root.within)) {
      return {
        ...escape(`reads below secrets.fileRoot ${shown}, which lies outside the repository: with a git source it is read in the commit's checkout`),
        allow: `give secrets.fileRoot as a directory of the repository (relative to its gatesync.yaml), or add ${ref.provider} to secrets.fromDaemonDisk to read it on the daemon's disk`,
      };
    }
    const reserved = this.reserved(root, target);
    if (reserved !== undefined) return { ok: false, reason: "scope", message: `${formatRef(ref)}: ${reserved.message}`, allow: reserved.allow };
    const real = this.realPath(target);
    if (real === undefined) {
      const missing = { ok: false, reason: "missing", message: `secret file ${file} does not exist in ${shown}` } as const;
      // in a commit: its file was not committed (an ignored file is left out of `git add -A`)
      if (root.within === undefined) return missing;
      return {
        ...missing,
        allow: `commit it below ${shown} (\`gatesync validate\` in the work tree warns when git ignores it), or add ${ref.provider} to secrets.fromDaemonDisk to read it on the daemon's disk`,
      };
    }
    const realRoot = this.realPath(root.dir);
    if (realRoot === undefined || !isInside(real, realRoot)) return escape(`leaves the secrets directory ${shown} through a link`);
    const realWithin = root.within === undefined ? undefined : this.realPath(root.within);
    if (root.within !== undefined && (realWithin === undefined || !isInside(real, realWithin))) return escape(`leaves the repository through a link`);
    const refused = this.reserved(root, real);
    if (refused !== undefined) return { ok: false, reason: "scope", message: `${formatRef(ref)}: ${refused.message}`, allow: refused.allow };
    const found = { ok: true, real } as const;
    this.#located.set(key, found);
    return found;
  }

  private reserved(root: SecretRoot, file: string): ReturnType<typeof fileRefusal> {
    return this.scope === undefined || root.within !== undefined ? undefined : fileRefusal(this.scope, file);
  }
}
