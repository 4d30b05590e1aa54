/**
 * Secret references inside string values: `${env:NAME}` and `${file:PATH}`.
 * `$${` writes a literal `${`. This file is their syntax and the resolution against any
 * `SecretSource`; the source that reads the environment and files, within the secret scope of
 * gatesync.yaml, is `secrets/env-file-source.ts`. Values are never logged: only the reference
 * (provider and name) is shown.
 */

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
