/** Secret references in a value (a resource's spec) replaced by what they resolve to. */
import type { PathSegment } from "../field-path.js";
import { findSecretRefs, formatRef, resolveSecretString, SecretResolutionError } from "../load/secret-refs.js";
import type { SecretSource } from "../load/secret-refs.js";

/**
 * The value with references resolved; every resolved value joins `found`. Copy-on-write: a
 * part without references is returned as it is.
 */
export function resolveSecrets(
  value: unknown,
  source: SecretSource,
  found: Set<string>,
  fail: (path: PathSegment[], message: string) => void,
  path: PathSegment[] = [],
): unknown {
  if (typeof value === "string") {
    if (!value.includes("${")) return value;
    const refs = findSecretRefs(value);
    if (refs.length === 0 && !value.includes("$${")) return value;
    for (const ref of refs) {
      const got = source.lookup(ref);
      if (got.ok) found.add(got.value);
      else fail([...path], `${formatRef(ref)} cannot be resolved: ${got.message}`);
    }
    try {
      return resolveSecretString(value, source);
    } catch (err) {
      if (err instanceof SecretResolutionError) return value;
      throw err;
    }
  }
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      path.push(i);
      const next = resolveSecrets(v, source, found, fail, path);
      path.pop();
      if (next !== v) (out ??= [...(value as unknown[])])[i] = next;
    });
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    path.push(k);
    const next = resolveSecrets(v, source, found, fail, path);
    path.pop();
    if (next !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = next;
  }
  return out ?? value;
}
