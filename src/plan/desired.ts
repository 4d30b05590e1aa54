/**
 * The edge before planning: resolves secret references, builds each resource's request
 * through its kind module, and replaces every sensitive value with a keyed-hash marker.
 * What comes out (`Desired`) holds no secret and is all the pure planner sees; the resolved
 * bodies (`Outgoing`) stay here for the apply.
 */
import { randomBytes } from "node:crypto";
import { adoptAnnotation } from "./adoption.js";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import type { KindName, KindRequest, Spec } from "../kinds/kind.js";
import { materialize } from "../kinds/document-ref.js";
import { kindModule } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import type { PathSegment } from "../field-path.js";
import { findSecretRefs, formatRef, resolveSecretString, SecretResolutionError } from "../load/secret-refs.js";
import type { SecretSource } from "../load/secret-refs.js";
import type { StateSnapshot } from "../record/state.js";
import { formatPath } from "../field-path.js";
import { contentHash } from "../kinds/canonical.js";
import { redact } from "../kinds/sensitive.js";

export interface Desired {
  readonly id: string;
  readonly kind: KindName;
  readonly name: string;
  /** The request with `compare` and `query` redacted; no body. */
  readonly request: Omit<KindRequest, "body">;
  /** Content hash of `request.compare` (and the trigger): equal to a record's appliedHash when nothing changed. */
  readonly hash: string;
  readonly dependsOn: readonly string[];
  readonly source: { readonly file: string; readonly line: number };
  /** The server id the `gatesync.dev/adopt` annotation adopts. */
  readonly adopt?: string;
}

/** What the apply sends: bodies with secrets, keyed by resource id. Never logged or stored. */
export interface Outgoing {
  readonly body: unknown;
  readonly query: Readonly<Record<string, string>>;
  /** The resolved secret values this resource holds: answers are redacted of them. */
  readonly secrets: ReadonlySet<string>;
}

export interface DesiredSet {
  readonly desired: Desired[];
  readonly outgoing: Map<string, Outgoing>;
  readonly diagnostics: Diagnostic[];
}

export interface PrepareOptions {
  readonly secrets: SecretSource;
  readonly hashKey: string;
  readonly appTypeProviders: ReadonlySet<number>;
  /** Results of earlier runs, reused for resources whose spec (the same parsed object) and inputs did not change. */
  readonly memo?: DesiredMemo;
  /** Prepares only these resources (a selection); the others still resolve references by name. */
  readonly only?: ReadonlySet<string>;
}

/**
 * What prepareDesired computed per resource, keyed by the parsed spec object (the validator
 * keeps unchanged files' objects between runs) and by everything else the result depends on:
 * the hash key, the API ids, the app-type providers, the resolved secret values and the
 * source position. A daemon's run after a one-file change then prepares that file only.
 */
export interface DesiredMemo {
  readonly entries: WeakMap<object, { readonly key: string; readonly desired: Desired; readonly outgoing: Outgoing }>;
}

export function newDesiredMemo(): DesiredMemo {
  return { entries: new WeakMap() };
}

/** The key of the keyed hashes: GATESYNC_HASH_KEY, else the state's, else a new one. */
export function hashKeyFor(env: Readonly<Record<string, string | undefined>>, state: StateSnapshot): { key: string; store: string | undefined } {
  const fromEnv = env.GATESYNC_HASH_KEY;
  if (fromEnv !== undefined && fromEnv !== "") return { key: fromEnv, store: undefined };
  if (state.hashKey !== undefined) return { key: state.hashKey, store: state.hashKey };
  const key = randomBytes(32).toString("hex");
  return { key, store: key };
}

export function prepareDesired(resources: readonly Resource[], opts: PrepareOptions): DesiredSet {
  const apis = new Map(resources.filter((r) => r.kind === "ApiDefinition").map((r) => [r.name, String(r.spec.apiId)]));
  const ctx = { apiIdOf: (name: string) => apis.get(name), appTypeProviders: opts.appTypeProviders };
  const desired: Desired[] = [];
  const outgoing = new Map<string, Outgoing>();
  const diagnostics: Diagnostic[] = [];
  const context = opts.memo === undefined ? "" : contentHash([opts.hashKey, [...apis.entries()].sort(), [...opts.appTypeProviders].sort()]);
  for (const r of resources) {
    const id = resourceId(r);
    if (opts.only !== undefined && !opts.only.has(id)) continue;
    const secrets = new Set<string>();
    const problems: Diagnostic[] = [];
    const resolved = resolveSecrets(r.spec, opts.secrets, secrets, (path, message) =>
      problems.push({ severity: "error", code: ErrorCode.SECRET_UNRESOLVED, file: r.source.file, resource: id, path: formatPath(["spec", ...path]), message, hint: "set it where gatesync plans and applies" }),
    ) as Spec;
    // a resource holding secrets is redacted wherever they appear: a document held by reference is read for it
    const spec = secrets.size === 0 ? resolved : materialize(resolved);
    if (problems.length > 0) {
      diagnostics.push(...problems);
      continue;
    }
    const memoKey = opts.memo === undefined ? "" : `${context}|${secrets.size === 0 ? "" : contentHash([...secrets].sort())}|${id}|${r.source.file}:${r.source.line}`;
    const known = opts.memo?.entries.get(r.spec);
    if (known !== undefined && known.key === memoKey) {
      desired.push(known.desired);
      outgoing.set(id, known.outgoing);
      continue;
    }
    const kind = kindModule(r.kind);
    const request = kind.request(spec, ctx);
    const compare = redact(request.compare, opts.hashKey, kind.secretFields, secrets) as Record<string, unknown>;
    const query = redact(request.query, opts.hashKey, [], secrets) as Record<string, string>;
    const { body, ...rest } = request;
    const d: Desired = {
      id,
      kind: r.kind,
      name: r.name,
      request: { ...rest, compare, query },
      hash: contentHash(compare),
      dependsOn: [...new Set(kind.references(r.spec).map((ref) => `${ref.kind}/${ref.name}`))].sort(),
      source: { file: r.source.file, line: r.source.line },
      ...(r.annotations[adoptAnnotation] === undefined ? {} : { adopt: r.annotations[adoptAnnotation] }),
    };
    const out: Outgoing = { body, query: request.query, secrets };
    desired.push(d);
    outgoing.set(id, out);
    opts.memo?.entries.set(r.spec, { key: memoKey, desired: d, outgoing: out });
  }
  return { desired, outgoing, diagnostics };
}

/**
 * The value with references resolved; every resolved value joins `found`. Copy-on-write: a
 * part without references is returned as it is.
 */
function resolveSecrets(value: unknown, source: SecretSource, found: Set<string>, fail: (path: PathSegment[], message: string) => void, path: PathSegment[] = []): unknown {
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
