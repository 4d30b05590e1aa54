/**
 * Secret references inside string values: `${env:NAME}` and `${file:PATH}`.
 * `$${` writes a literal `${`. Files resolve inside one directory (secrets.fileRoot) and may
 * not leave it. Values are never logged: only the reference (provider and name) is shown.
 */
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { isInside } from "../file-paths.js";
import { registerSecret } from "../secrets/redactor.js";
import { envRefusal, fileRefusal } from "../secrets/scope.js";
import type { SecretScope } from "../secrets/scope.js";

export type SecretProvider = "env" | "file";

export interface SecretRef {
  readonly provider: SecretProvider;
  readonly name: string;
}

const pattern = /\$\$\{|\$\{(env|file):([^}]*)\}/g;
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The references in one string (escapes excluded). */
export function findSecretRefs(value: string): SecretRef[] {
  if (!value.includes("${")) return [];
  const refs: SecretRef[] = [];
  for (const m of value.matchAll(pattern)) {
    if (m[1] !== undefined) refs.push({ provider: m[1] as SecretProvider, name: m[2] ?? "" });
  }
  return refs;
}

export function hasSecretRef(value: unknown): boolean {
  return typeof value === "string" && findSecretRefs(value).length > 0;
}

export function formatRef(ref: SecretRef): string {
  return `\${${ref.provider}:${ref.name}}`;
}

/** Why a reference is malformed, or undefined when it is well-formed. */
export function refSyntaxProblem(ref: SecretRef): string | undefined {
  if (ref.provider === "env" && !envName.test(ref.name)) return `\`${formatRef(ref)}\`: \`${ref.name}\` is not an environment variable name`;
  if (ref.provider === "file" && ref.name.trim() === "") return `\`${formatRef(ref)}\`: the file path is empty`;
  return undefined;
}

export type SecretLookup =
  | { ok: true; value: string }
  | { ok: false; reason: "missing" | "escape" | "unreadable"; message: string }
  /** Outside the secret scope of gatesync.yaml; `allow` says which setting would allow it. */
  | { ok: false; reason: "scope"; message: string; allow: string };

export interface SecretSource {
  lookup(ref: SecretRef): SecretLookup;
}

/**
 * Reads secrets from an environment and from files below one directory, within a scope (see
 * secrets/scope.ts; without one, everything resolves: library use and tests). Every value read
 * is registered with the redaction layer.
 */
export class EnvFileSecretSource implements SecretSource {
  constructor(
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly fileRoot: string,
    private readonly scope?: SecretScope,
  ) {}

  lookup(ref: SecretRef): SecretLookup {
    const found = this.read(ref);
    if (found.ok) registerSecret(found.value);
    return found;
  }

  private read(ref: SecretRef): SecretLookup {
    if (ref.provider === "env") {
      const refused = this.scope === undefined ? undefined : envRefusal(this.scope, ref.name);
      if (refused !== undefined) return { ok: false, reason: "scope", ...refused };
      const value = this.env[ref.name];
      return value === undefined
        ? { ok: false, reason: "missing", message: `environment variable ${ref.name} is not set` }
        : { ok: true, value };
    }
    const target = path.resolve(this.fileRoot, ref.name);
    if (!isInside(target, this.fileRoot)) {
      return { ok: false, reason: "escape", message: `${formatRef(ref)} leaves the secrets directory ${this.fileRoot}` };
    }
    const reserved = this.scope === undefined ? undefined : fileRefusal(this.scope, target);
    if (reserved !== undefined) return { ok: false, reason: "scope", message: `${formatRef(ref)}: ${reserved.message}`, allow: reserved.allow };
    let real: string;
    try {
      real = realpathSync(target);
    } catch {
      return { ok: false, reason: "missing", message: `secret file ${ref.name} does not exist in ${this.fileRoot}` };
    }
    if (!isInside(real, realpathSync(this.fileRoot))) {
      return { ok: false, reason: "escape", message: `${formatRef(ref)} leaves the secrets directory ${this.fileRoot} through a link` };
    }
    const refused = this.scope === undefined ? undefined : fileRefusal(this.scope, real);
    if (refused !== undefined) return { ok: false, reason: "scope", message: `${formatRef(ref)}: ${refused.message}`, allow: refused.allow };
    try {
      // A trailing newline is almost always an artefact of how the file was written.
      return { ok: true, value: readFileSync(real, "utf8").replace(/\r?\n$/, "") };
    } catch {
      return { ok: false, reason: "unreadable", message: `secret file ${ref.name} cannot be read` };
    }
  }
}

/** Replaces references with their values; throws on the first that cannot be resolved. */
export function resolveSecretString(value: string, source: SecretSource): string {
  if (!value.includes("${")) return value;
  return value.replace(pattern, (whole, provider: string | undefined, name: string | undefined) => {
    if (provider === undefined) return "${"; // the $${ escape
    const result = source.lookup({ provider: provider as SecretProvider, name: name ?? "" });
    if (!result.ok) throw new SecretResolutionError(result.message);
    void whole;
    return result.value;
  });
}

export class SecretResolutionError extends Error {}

/** Calls `visit` for each string in a value, with its path. */
export function walkStrings(value: unknown, visit: (s: string, path: ReadonlyArray<string | number>) => void, base: ReadonlyArray<string | number> = []): void {
  if (typeof value === "string") {
    visit(value, base);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => walkStrings(v, visit, [...base, i]));
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) walkStrings(v, visit, [...base, k]);
  }
}
