/**
 * The edge before planning: resolves secret references, builds each resource's request
 * through its kind module, and replaces every sensitive value with a keyed-hash marker.
 * What comes out (`Desired`) holds no secret and is all the pure planner sees; the resolved
 * bodies (`Outgoing`) stay here for the apply.
 */
import { randomBytes } from "node:crypto";
import { adoptAnnotation } from "./adoption.js";
import { ErrorCode, SourceError } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import type { KindName, KindRequest, RequestContext, Spec } from "../kinds/kind.js";
import { jsonTextOf } from "../kinds/json-text.js";
import { materialize } from "../kinds/document-ref.js";
import { kindModule } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import { resolveSecrets } from "./resolve-secrets.js";
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

/** The bodies the apply sends, resolved when asked for (see `prepareDesired`). */
export interface OutgoingRequests {
  /** Throws SOURCE_CHANGED when what it resolves no longer matches what was planned. */
  get(id: string): Outgoing | undefined;
}

export interface DesiredSet {
  readonly desired: Desired[];
  /** The desired resource of an id (one index for the whole set, shared by every reader). */
  readonly find: (id: string) => Desired | undefined;
  readonly outgoing: OutgoingRequests;
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
  /**
   * "resource": the caller keeps the resources (an apply, which sends their bodies): a request's
   * compare is made again from its resource when read — three reads per change at most — instead
   * of being kept as text beside it. Not with a memo (its entries outlive a run's resources).
   */
  readonly compareFrom?: "resource";
}

/**
 * What prepareDesired computed per resource, keyed by the parsed spec object (the validator
 * keeps unchanged files' objects between runs) and by everything else the result depends on:
 * the hash key, the API ids, the app-type providers, the resolved secret values and the
 * source position. A daemon's run after a one-file change then prepares that file only.
 */
export interface DesiredMemo {
  readonly entries: WeakMap<object, { readonly key: string; readonly desired: Desired }>;
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

/** One resource's spec with its secret references resolved, and the values they resolved to. */
function resolveSpec(r: Resource, spec: Spec, source: SecretSource, problems: Diagnostic[]): { spec: Spec; secrets: Set<string> } {
  const id = resourceId(r);
  const secrets = new Set<string>();
  const resolved = resolveSecrets(spec, source, secrets, (path, message) =>
    problems.push({ severity: "error", code: ErrorCode.SECRET_UNRESOLVED, file: r.source.file, resource: id, path: formatPath(["spec", ...path]), message, hint: "set it where gatesync plans and applies" }),
  ) as Spec;
  // a resource holding secrets is redacted wherever they appear: a document held by reference is read for it
  return { spec: secrets.size === 0 ? resolved : materialize(resolved), secrets };
}

/** The request of a resolved spec, and its parts redacted for the plan. */
function requestFor(kindName: KindName, spec: Spec, secrets: ReadonlySet<string>, hashKey: string, ctx: RequestContext): { request: KindRequest; compare: Record<string, unknown>; query: Record<string, string> } {
  const kind = kindModule(kindName);
  const request = kind.request(spec, ctx);
  const compare = redact(request.compare, hashKey, kind.secretFields, secrets) as Record<string, unknown>;
  const query = redact(request.query, hashKey, [], secrets) as Record<string, string>;
  return { request, compare, query };
}

function apiIds(resources: readonly Resource[]): Map<string, string> {
  return new Map(resources.filter((r) => r.kind === "ApiDefinition").map((r) => [r.name, String(r.spec.apiId)]));
}

const noDependencies: readonly string[] = Object.freeze([]);

/** The ids a resource's references name, sorted, each the named resource's own id string where there is one. */
function dependencies(refs: ReadonlyArray<{ kind: string; name: string }>, ids: ReadonlyMap<string, string>): readonly string[] {
  if (refs.length === 0) return noDependencies;
  return [...new Set(refs.map((ref) => { const id = resourceId(ref); return ids.get(id) ?? id; }))].sort();
}

/**
 * Desired resources, without their bodies: what the apply sends is resolved again when it is
 * sent (`outgoing.get`), so a plan of 100,000 resources does not hold every body beside every
 * request; a resolved body whose redacted request no longer has the planned hash (a secret
 * file or document changed meanwhile) is refused, never sent unplanned.
 */
export function prepareDesired(resources: readonly Resource[], opts: PrepareOptions): DesiredSet {
  const apis = apiIds(resources);
  const ctx: RequestContext = { apiIdOf: (name: string) => apis.get(name), appTypeProviders: opts.appTypeProviders };
  const desired: Desired[] = [];
  const sources: Resource[] = [];
  // a reference names a resource by the id string of that resource (one string, not one per reference)
  const ids = new Map(resources.map((r) => { const id = resourceId(r); return [id, id]; }));
  const diagnostics: Diagnostic[] = [];
  const context = opts.memo === undefined ? "" : contentHash([opts.hashKey, [...apis.entries()].sort(), [...opts.appTypeProviders].sort()]);
  // one for all: each request holds its resource and this (see PrepareOptions.compareFrom)
  let remake: RemadeCompare | undefined;
  for (const r of resources) {
    const id = ids.get(resourceId(r))!;
    if (opts.only !== undefined && !opts.only.has(id)) continue;
    // a spec held as text is parsed on each read: once here
    const spec = r.spec;
    const problems: Diagnostic[] = [];
    const { spec: resolved, secrets } = resolveSpec(r, spec, opts.secrets, problems);
    if (problems.length > 0) {
      diagnostics.push(...problems);
      continue;
    }
    const memoKey = opts.memo === undefined ? "" : `${context}|${secrets.size === 0 ? "" : contentHash([...secrets].sort())}|${id}|${r.source.file}:${r.source.line}`;
    const known = opts.memo?.entries.get(spec);
    if (known !== undefined && known.key === memoKey) {
      desired.push(known.desired);
      sources.push(r);
      continue;
    }
    const { request, compare, query } = requestFor(r.kind, resolved, secrets, opts.hashKey, ctx);
    const d: Desired = {
      id,
      kind: r.kind,
      name: r.name,
      request: new HeldRequest(request, opts.compareFrom === "resource" && opts.memo === undefined ? { from: r, remake: (remake ??= new RemadeCompare(opts, ctx)) } : { compare }, query),
      hash: contentHash(compare),
      dependsOn: dependencies(kindModule(r.kind).references(spec), ids),
      source: { file: r.source.file, line: r.source.line },
      ...(r.annotations[adoptAnnotation] === undefined ? {} : { adopt: r.annotations[adoptAnnotation] }),
    };
    desired.push(d);
    sources.push(r);
    opts.memo?.entries.set(spec, { key: memoKey, desired: d });
  }
  // one id → position map for the set: the bodies' resolver and every lookup by id read it
  const index = new Map(desired.map((d, i) => [d.id, i]));
  const find = (id: string): Desired | undefined => {
    const i = index.get(id);
    return i === undefined ? undefined : desired[i];
  };
  return { desired, find, outgoing: new ResolvedRequests(desired, sources, index, { ...opts, ctx, remade: remake }), diagnostics };
}

const noQuery: Readonly<Record<string, string>> = Object.freeze({});

/** Empty addresses (kinds addressed by server ids alone): one shared object. */
const noAddress: Readonly<Record<string, string>> = Object.freeze({});

/** Compares of bodies resolved lately that RemadeCompare keeps: more than the calls in flight. */
const recentCompares = 4096;

/**
 * Makes a request's compare again from its resource on each read (see PrepareOptions.compareFrom)
 * — except for a body resolved lately: the records of its call (the intent, the verdict) read the
 * compare that body was checked against, what was sent, instead of making it a second and third
 * time (most of what a first apply of 100,000 resources allocates). Oldest first, bounded.
 */
class RemadeCompare {
  readonly #recent = new Map<Resource, Record<string, unknown>>();

  constructor(
    private readonly opts: PrepareOptions,
    private readonly ctx: RequestContext,
  ) {}

  /** `compare` is what the body of `r` resolved just now was checked against. */
  sent(r: Resource, compare: Record<string, unknown>): void {
    this.#recent.delete(r);
    this.#recent.set(r, compare);
    if (this.#recent.size > recentCompares) this.#recent.delete(this.#recent.keys().next().value!);
  }

  make(r: Resource): Record<string, unknown> {
    const recent = this.#recent.get(r);
    if (recent !== undefined) return recent;
    const problems: Diagnostic[] = [];
    const { spec, secrets } = resolveSpec(r, r.spec, this.opts.secrets, problems);
    if (problems.length > 0) throw sourceChanged(r);
    return requestFor(r.kind, spec, secrets, this.opts.hashKey, this.ctx).compare;
  }
}

function sourceChanged(r: Resource): SourceError {
  return new SourceError(ErrorCode.SOURCE_CHANGED, `${resourceId(r)}: what ${r.source.file} resolves to changed after it was planned`, {
    hint: "a file or secret the resource uses changed while gatesync was running: nothing of it was sent; run again",
  });
}

/**
 * The redacted request a plan keeps (no body): its `compare` held as JSON text where it is
 * plain JSON (see json-text.ts) — parsed on each read, a fresh copy — else as itself (a
 * document held by reference). Every instance has the same shape.
 */
class HeldRequest implements Omit<KindRequest, "body"> {
  readonly address: Readonly<Record<string, string>>;
  readonly create: KindRequest["create"];
  readonly update: KindRequest["update"];
  readonly query: Readonly<Record<string, string>>;
  readonly ignoredByUpdate: readonly string[] | undefined;
  readonly trigger: string | undefined;
  readonly notes: readonly string[] | undefined;
  /** Text or value; or the resource it is made again from, when `#remake` is set. */
  readonly #compare: string | Readonly<Record<string, unknown>> | Resource;
  readonly #remake: RemadeCompare | undefined;

  constructor(request: KindRequest, compare: { readonly compare: Readonly<Record<string, unknown>> } | { readonly from: Resource; readonly remake: RemadeCompare }, query: Readonly<Record<string, string>>) {
    this.address = Object.keys(request.address).length === 0 ? noAddress : request.address;
    this.create = request.create;
    this.update = request.update;
    this.query = Object.keys(query).length === 0 ? noQuery : query;
    this.ignoredByUpdate = request.ignoredByUpdate;
    this.trigger = request.trigger;
    this.notes = request.notes;
    if ("from" in compare) {
      this.#compare = compare.from;
      this.#remake = compare.remake;
    } else {
      this.#compare = jsonTextOf(compare.compare) ?? compare.compare;
      this.#remake = undefined;
    }
  }

  get compare(): Readonly<Record<string, unknown>> {
    if (this.#remake !== undefined) return this.#remake.make(this.#compare as Resource);
    return typeof this.#compare === "string" ? (JSON.parse(this.#compare) as Record<string, unknown>) : (this.#compare as Readonly<Record<string, unknown>>);
  }

  /** Serialised, a plain request. */
  toJSON(): Omit<KindRequest, "body"> {
    return { ...this, compare: this.compare };
  }
}

/** Bodies resolved on request from the resources, checked against the planned hashes. */
class ResolvedRequests implements OutgoingRequests {
  /**
   * `sources[i]` is the resource `desired[i]` was prepared from; `index` is the position of each
   * desired resource (by its own id string): one map entry per resource, no object.
   */
  constructor(
    private readonly desired: readonly Desired[],
    private readonly sources: readonly Resource[],
    private readonly index: ReadonlyMap<string, number>,
    /** `remade`: the requests' compares are made again from the resources (they learn what was sent). */
    private readonly opts: PrepareOptions & { readonly ctx: RequestContext; readonly remade: RemadeCompare | undefined },
  ) {}

  get(id: string): Outgoing | undefined {
    const i = this.index.get(id);
    if (i === undefined) return undefined;
    const r = this.sources[i]!;
    const problems: Diagnostic[] = [];
    const { spec, secrets } = resolveSpec(r, r.spec, this.opts.secrets, problems);
    const resolved = problems.length > 0 ? undefined : requestFor(r.kind, spec, secrets, this.opts.hashKey, this.opts.ctx);
    if (resolved === undefined || contentHash(resolved.compare) !== this.desired[i]!.hash) throw sourceChanged(r);
    this.opts.remade?.sent(r, resolved.compare);
    return { body: resolved.request.body, query: resolved.request.query, secrets };
  }
}
