/**
 * The edge before planning: resolves secret references, builds each resource's request
 * through its kind module, and replaces every sensitive value with a keyed-hash marker.
 * What comes out (`Desired`) holds no secret and is all the pure planner sees; what the apply
 * sends (`Outgoing`) is resolved again from the resources when it is sent (outgoing.ts).
 */
import { randomBytes } from "node:crypto";
import { adoptAnnotation } from "./adoption.js";
import { movedFromAnnotation } from "./renames.js";
import type { Diagnostic } from "../errors.js";
import type { KindName, KindRequest, RequestContext } from "../kinds/kind.js";
import { jsonTextOf } from "../kinds/json-text.js";
import { kindModule } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import type { SecretSource } from "../load/secret-refs.js";
import type { StateSnapshot } from "../record/state.js";
import { contentHash } from "../kinds/canonical.js";
import { RemadeCompare, requestFor, ResolvedLately, ResolvedRequests, resolveSpec } from "./outgoing.js";

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
  /** The old name the `gatesync.dev/moved-from` annotation declares (a rename: renames.ts). */
  readonly movedFrom?: string;
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
  /** The secret values the body of `id` held when it was last resolved (an answer is redacted of them); resolved now if it was not lately. */
  secretsOf(id: string): ReadonlySet<string>;
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
   * compare is made again from its resource when read (or is the one its body was last resolved
   * with) instead of being kept as text beside it. Not with a memo (its entries outlive a run's
   * resources).
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

function apiIds(resources: readonly Resource[]): Map<string, string> {
  return new Map(resources.filter((r) => r.kind === "ApiDefinition").map((r) => [r.name, String(r.spec.read().apiId)]));
}

const noDependencies: readonly string[] = Object.freeze([]);

/** The ids a resource's references name, sorted, each the named resource's own id string where there is one. */
function dependencies(refs: ReadonlyArray<{ kind: string; name: string }>, ids: ReadonlyMap<string, string>): readonly string[] {
  if (refs.length === 0) return noDependencies;
  return [
    ...new Set(
      refs.map((ref) => {
        const id = resourceId(ref);
        return ids.get(id) ?? id;
      }),
    ),
  ].sort();
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
  const ids = new Map(
    resources.map((r) => {
      const id = resourceId(r);
      return [id, id];
    }),
  );
  const diagnostics: Diagnostic[] = [];
  const context = opts.memo === undefined ? "" : contentHash([opts.hashKey, [...apis.entries()].sort(), [...opts.appTypeProviders].sort()]);
  const recent = new ResolvedLately();
  // one for all: each request holds its resource and this (see PrepareOptions.compareFrom)
  let remake: RemadeCompare | undefined;
  for (const r of resources) {
    const id = ids.get(resourceId(r))!;
    if (opts.only !== undefined && !opts.only.has(id)) continue;
    // a spec held as text is parsed on each read: once here
    const spec = r.spec.read();
    const problems: Diagnostic[] = [];
    const { spec: resolved, secrets } = resolveSpec(r, spec, opts.secrets, problems);
    if (problems.length > 0) {
      diagnostics.push(...problems);
      continue;
    }
    const memoKey =
      opts.memo === undefined ? "" : `${context}|${secrets.size === 0 ? "" : contentHash([...secrets].sort())}|${id}|${r.source.file}:${r.source.line}`;
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
      request: new HeldRequest(
        request,
        opts.compareFrom === "resource" && opts.memo === undefined ? { from: r, remake: (remake ??= new RemadeCompare(opts, ctx, recent)) } : { compare },
        query,
      ),
      hash: contentHash(compare),
      dependsOn: dependencies(kindModule(r.kind).references(spec), ids),
      source: { file: r.source.file, line: r.source.line },
      ...(r.annotations[adoptAnnotation] === undefined ? {} : { adopt: r.annotations[adoptAnnotation] }),
      ...(r.annotations[movedFromAnnotation] === undefined ? {} : { movedFrom: r.annotations[movedFromAnnotation] }),
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
  return { desired, find, outgoing: new ResolvedRequests(desired, sources, index, { ...opts, ctx, recent }), diagnostics };
}

const noQuery: Readonly<Record<string, string>> = Object.freeze({});

/** Empty addresses (kinds addressed by server ids alone): one shared object. */
const noAddress: Readonly<Record<string, string>> = Object.freeze({});

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

  constructor(
    request: KindRequest,
    compare: { readonly compare: Readonly<Record<string, unknown>> } | { readonly from: Resource; readonly remake: RemadeCompare },
    query: Readonly<Record<string, string>>,
  ) {
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
