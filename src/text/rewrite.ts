/**
 * Copy-on-write rewriting of JSON-like values, shared by the walks that replace parts of a
 * value (secrets marked, secrets scrubbed, documents held by reference read in): `at` returns
 * the replacement of a value, or `descend` to walk into its array items or object members. A
 * part in which nothing changes is returned as it is, not copied.
 */
export const descend: unique symbol = Symbol("descend");

export function rewrite(value: unknown, at: (value: unknown) => unknown): unknown {
  const replaced = at(value);
  if (replaced !== descend) return replaced;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v: unknown, i) => {
      const next = rewrite(v, at);
      if (next !== v) (out ??= [...(value as unknown[])])[i] = next;
    });
    return out ?? value;
  }
  if (value === null || typeof value !== "object") return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const next = rewrite(v, at);
    if (next !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = next;
  }
  return out ?? value;
}
