/**
 * References inside string values: `${scheme:NAME}`, and `$${` for a literal `${`. Secrets use
 * three schemes, `${env:NAME}`, `${file:PATH}` and `${sops:PATH#KEY.PATH}`; the scanner below
 * reports every scheme so that other kinds of reference (an environment's `${var:NAME}`, which is
 * not a secret) can share the one syntax and walker, while every secret function here considers
 * only the secret ones. A
 * reference of any other scheme is an error of validation (validate/reference-check.ts).
 * Values are never shown: only the reference (scheme and name).
 */

export type SecretProvider = "env" | "file" | "sops";

export interface SecretRef {
  readonly provider: SecretProvider;
  readonly name: string;
}

/** One `${scheme:name}` in a string, whatever its scheme. */
export interface ReferenceMatch {
  readonly scheme: string;
  readonly name: string;
}

const pattern = /\$\$\{|\$\{([A-Za-z][A-Za-z0-9_-]*):([^}]*)\}/g;
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const isSecretScheme = (scheme: string): scheme is SecretProvider => scheme === "env" || scheme === "file" || scheme === "sops";

/** Every scheme gatesync reads: the three secret ones and an environment's values (`${var:NAME}`, load/values.ts). */
export const knownSchemes: readonly string[] = ["env", "file", "sops", "var"];

/**
 * The references of a string whose scheme gatesync does not know (`${evn:TOKEN}`, `${vault:…}`):
 * each would otherwise be sent as written, as text. Shell's parameter forms (`${PORT:-8080}`,
 * `${X:=y}`, `${X:?}`, `${X:+y}`), which OpenAPI descriptions quote, are text, not references.
 */
export function unknownReferences(value: string): ReferenceMatch[] {
  return scanReferences(value).filter((m) => !knownSchemes.includes(m.scheme) && !/^[-=?+]/.test(m.name));
}

export const formatMatch = (m: ReferenceMatch): string => `\${${m.scheme}:${m.name}}`;

/**
 * The one walker over a string's references: `replace` gives each reference's replacement, or
 * undefined to leave its text as written; an escape `$${` becomes `${`. A string without `${`
 * is returned as it is.
 */
export function replaceReferences(value: string, replace: (ref: ReferenceMatch) => string | undefined): string {
  if (!value.includes("${")) return value;
  return value.replace(pattern, (whole, scheme: string | undefined, name: string | undefined) => {
    if (scheme === undefined) return "${";
    return replace({ scheme, name: name ?? "" }) ?? whole;
  });
}

/** Every reference in one string, of any scheme, in order (escapes excluded): the walker above, replacing nothing. */
export function scanReferences(value: string): ReferenceMatch[] {
  const found: ReferenceMatch[] = [];
  replaceReferences(value, (m) => {
    found.push(m);
    return undefined;
  });
  return found;
}

/** The secret references in one string (escapes and other schemes excluded). */
export function findSecretRefs(value: string): SecretRef[] {
  return scanReferences(value).flatMap((m) => (isSecretScheme(m.scheme) ? [{ provider: m.scheme, name: m.name }] : []));
}

/** Whether any string of a value passes `test`: a walk that stops at the first, and makes no paths (documents are large). */
export function someString(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === "string") return test(value);
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some((v) => someString(v, test));
  for (const v of Object.values(value)) if (someString(v, test)) return true;
  return false;
}

/** Whether any string of a value holds an escape `$${`, which the secret stage writes as `${`. */
export const holdsEscape = (value: unknown): boolean => someString(value, (s) => s.includes("$${"));

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
  if (ref.provider === "sops") return sopsSyntaxProblem(ref);
  return undefined;
}

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

/** `${sops:PATH}` or `${sops:PATH#KEY.PATH}`: a path, and key path segments none of which is empty. */
function sopsSyntaxProblem(ref: SecretRef): string | undefined {
  const hash = ref.name.indexOf("#");
  const file = hash < 0 ? ref.name : ref.name.slice(0, hash);
  if (file.trim() === "") return `\`${formatRef(ref)}\`: the file path is empty`;
  if (
    hash >= 0 &&
    ref.name
      .slice(hash + 1)
      .split(".")
      .some((k) => k === "")
  )
    return `\`${formatRef(ref)}\`: the key path has an empty key (write #KEY.PATH, e.g. #db.password)`;
  return undefined;
}
