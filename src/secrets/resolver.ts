/**
 * Resolving secret references: a source answers one reference (`env-file-source.ts` reads the
 * environment and files within the scope); `SecretResolver` asks it at most once per reference
 * for the whole run (validation, preparing the desired set, the bodies an apply sends), so a
 * run sees one value per reference and the planner, which only compares what was prepared,
 * never reaches a source.
 */
import type { PathSegment } from "../text/field-path.js";
import { formatRef, isSecretScheme, replaceReferences } from "./references.js";
import type { SecretRef } from "./references.js";
import type { SopsCode } from "./sops/sops-format.js";
import { sealedPlaceholder } from "./sealed-values.js";
import type { SopsFinding } from "./sops/sops-findings.js";

export type SecretLookup =
  /** `sealed`: a SOPS value's fingerprint as encrypted (sealed-values.ts). */
  | { ok: true; value: string; sealed?: string }
  /** `code`: a more precise code than SECRET_UNRESOLVED (SOPS_NO_IDENTITY). */
  | { ok: false; reason: "missing" | "escape" | "unreadable"; message: string; code?: SopsCode; allow?: string }
  /** A SOPS file that is malformed, tampered with, or not for the keys given (its code says which). */
  | { ok: false; reason: "sops"; message: string; code: SopsCode }
  /** Outside the secret scope of gatesync.yaml; `allow` says which setting would allow it. */
  | { ok: false; reason: "scope"; message: string; allow: string };

/** Where references are looked up (the environment, files, a test's table). */
export interface SecretSource {
  lookup(ref: SecretRef): SecretLookup;
  /** Told every reference about to be looked up, so that it can read them together (a run's SOPS files' keys unwrapped at once). */
  prefetch?(refs: readonly SecretRef[]): Promise<void> | void;
  /** What validate warns about in the SOPS files read so far, each file once (sops-findings.ts); `shown` names a file. */
  sopsFindings?(shown: (real: string) => string): ReadonlyArray<SopsFinding & { readonly real: string }>;
  /** The directory `${file:}` and `${sops:}` resolve in (its real path), when the source has one. */
  secretsDirectory?(): string | undefined;
}

/** A source asked once per reference: every later lookup of the same reference answers what the first one got. */
export class SecretResolver implements SecretSource {
  readonly #answers = new Map<string, SecretLookup>();

  constructor(private readonly source: SecretSource) {}

  /** The resolver of a run: `source` itself when it already is one. */
  static of(source: SecretSource): SecretResolver {
    return source instanceof SecretResolver ? source : new SecretResolver(source);
  }

  async prefetch(refs: readonly SecretRef[]): Promise<void> {
    await this.source.prefetch?.(refs.filter((ref) => !this.#answers.has(formatRef(ref))));
  }

  sopsFindings(shown: (real: string) => string): ReadonlyArray<SopsFinding & { readonly real: string }> {
    return this.source.sopsFindings?.(shown) ?? [];
  }

  secretsDirectory(): string | undefined {
    return this.source.secretsDirectory?.();
  }

  lookup(ref: SecretRef): SecretLookup {
    const key = formatRef(ref);
    let answer = this.#answers.get(key);
    if (answer === undefined) this.#answers.set(key, (answer = this.source.lookup(ref)));
    return answer;
  }
}

/** The values a resource's references resolved to; those of SOPS files also by their placeholders (sealed-values.ts). */
export interface FoundSecrets {
  readonly values: Set<string>;
  readonly sealing: Map<string, string>;
}

/**
 * The value with secret references resolved; every resolved value joins `found`, and each
 * reference that cannot be resolved is reported to `fail` (its text then stays as written).
 * Copy-on-write: a part without references is returned as it is.
 */
export function resolveSecrets(
  value: unknown,
  source: SecretSource,
  found: FoundSecrets,
  fail: (path: PathSegment[], message: string) => void,
  path: PathSegment[] = [],
): unknown {
  if (typeof value === "string") {
    let failed = false;
    const resolved = replaceReferences(value, (m) => {
      if (!isSecretScheme(m.scheme)) return undefined;
      const ref: SecretRef = { provider: m.scheme, name: m.name };
      const got = source.lookup(ref);
      if (got.ok) {
        found.values.add(got.value);
        if (got.sealed !== undefined) found.sealing.set(got.value, sealedPlaceholder(got.sealed));
        return got.value;
      }
      failed = true;
      fail([...path], `${formatRef(ref)} cannot be resolved: ${got.message}`);
      return undefined;
    });
    return failed ? value : resolved;
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
