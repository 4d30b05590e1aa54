/**
 * The edge before planning: secret references resolved (each looked up once for the run,
 * through a `SecretResolver`), each resource's request built through its kind module, every
 * sensitive value replaced with a keyed-hash marker, and the documents the planner will diff
 * read. What comes out (`Desired`, desired.ts) holds no secret and is all the pure planner sees;
 * what the apply sends (`Outgoing`) is made from the resources when it is sent (outgoing.ts).
 */
import { adoptAnnotation } from "./names/adopt-annotation.js";
import { movedFromAnnotation } from "./names/renames.js";
import type { Diagnostic } from "../errors.js";
import { materialize } from "../kinds/document-ref.js";
import type { KindName, KindRequest, RequestContext } from "../kinds/kind.js";
import { jsonTextOf } from "../kinds/json-text.js";
import { kindModule, providedApiIds } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import { SecretResolver } from "../secrets/resolver.js";
import type { ResourceRecord } from "../record/state.js";
import { formerHolders } from "../record/lineage/rename-lineage.js";
import { contentHash } from "../kinds/canonical.js";
import type { Desired, DesiredSet, PlannedRequestView, PrepareOptions } from "./desired.js";
import { BodiesToSend, CompareRebuilder, RecentlySent, requestFor, resolveSpec } from "./outgoing.js";
import type { RequestMaking } from "./outgoing.js";

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
 * Whether the planner will diff a resource's compare field by field against its record: its
 * content hash differs from what was applied (under its name, the one it declares it moved
 * from, or the record it is an earlier name of: returns.ts). Its documents held by reference are
 * then read here, not by the planner.
 */
function diffedAgainst(prep: Preparation, id: string, movedFrom: string | undefined, kind: KindName): (hash: string) => boolean {
  const state = prep.opts.state;
  const record =
    state?.resources.get(id) ??
    (movedFrom === undefined ? undefined : state?.resources.get(resourceId({ kind, name: movedFrom }))) ??
    prep.holders.get(id)?.[0];
  return (hash) => record !== undefined && record.appliedHash !== hash;
}

/** What preparing every resource of one set shares. */
interface Preparation {
  readonly opts: PrepareOptions;
  readonly ctx: RequestContext;
  readonly making: RequestMaking;
  /** Each resource's id → that id's one string: a reference names a resource by it (one string, not one per reference). */
  readonly ids: ReadonlyMap<string, string>;
  /** What every memo key of the set holds: the hash key, the API ids, the app-type providers. */
  readonly memoContext: string;
  readonly recent: RecentlySent;
  /** Each earlier name of a record → the records that had it (record/rename-lineage.ts). */
  readonly holders: ReadonlyMap<string, readonly ResourceRecord[]>;
  /** One for all: each request holds its resource and this (see PrepareOptions.compareFrom). */
  rebuilder: CompareRebuilder | undefined;
}

function preparation(resources: readonly Resource[], opts: PrepareOptions): Preparation {
  const apis = providedApiIds(resources);
  const ctx: RequestContext = { apiIdOf: (name: string) => apis.get(name), appTypeProviders: opts.appTypeProviders };
  const ids = new Map(
    resources.map((r) => {
      const id = resourceId(r);
      return [id, id];
    }),
  );
  return {
    opts,
    ctx,
    making: { resolver: SecretResolver.of(opts.secrets), hashKey: opts.hashKey, ctx },
    ids,
    memoContext: opts.memo === undefined ? "" : contentHash([opts.hashKey, [...apis.entries()].sort(), [...opts.appTypeProviders].sort()]),
    recent: new RecentlySent(),
    holders: formerHolders(opts.state),
    rebuilder: undefined,
  };
}

/**
 * Desired resources, without their bodies: what the apply sends is made again when it is sent
 * (`outgoing.read`), so a plan of 100,000 resources does not hold every body beside every
 * request; a body whose redacted request no longer has the planned hash (a document changed
 * meanwhile) is refused, never sent unplanned. Secrets are looked up once per reference (the
 * resolver keeps the answers), so what is sent carries the values that were planned.
 */
export function prepareDesired(resources: readonly Resource[], opts: PrepareOptions): DesiredSet {
  const prep = preparation(resources, opts);
  const desired: Desired[] = [];
  const sources: Resource[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const r of resources) {
    const id = prep.ids.get(resourceId(r))!;
    if (opts.only !== undefined && !opts.only.has(id)) continue;
    const d = prepareOne(r, id, prep, diagnostics);
    if (d === undefined) continue;
    desired.push(d);
    sources.push(r);
  }
  // one id → position map for the set: the bodies and every lookup by id read it
  const index = new Map(desired.map((d, i) => [d.id, i]));
  const find = (id: string): Desired | undefined => {
    const i = index.get(id);
    return i === undefined ? undefined : desired[i];
  };
  return { desired, find, outgoing: new BodiesToSend(desired, sources, index, prep.making, prep.recent), diagnostics };
}

/**
 * One resource's desired form — its memo's, when nothing it depends on changed — or undefined,
 * its problems added to `diagnostics`.
 */
function prepareOne(r: Resource, id: string, prep: Preparation, diagnostics: Diagnostic[]): Desired | undefined {
  const { opts } = prep;
  const problems: Diagnostic[] = [];
  // a spec held as text is parsed on each read: once here
  const { written: spec, spec: resolved, secrets, sealing, readDocuments } = resolveSpec(r, prep.making.resolver, problems);
  if (problems.length > 0) {
    diagnostics.push(...problems);
    return undefined;
  }
  const diffed = diffedAgainst(prep, id, r.annotations[movedFromAnnotation], r.kind);
  const memoKey = opts.memo === undefined ? "" : `${prep.memoContext}|${secretsKey(secrets, sealing)}|${id}|${r.source.file}:${r.source.line}`;
  const known = opts.memo?.entries.get(spec);
  if (known !== undefined && known.key === `${memoKey}${diffed(known.desired.hash) ? "|read" : ""}`) return known.desired;
  const { request, compare, query } = requestFor(r.kind, resolved, secrets, sealing, opts.hashKey, prep.ctx);
  const hash = contentHash(compare);
  const read = diffed(hash);
  const held = heldCompare(compare, { read, rebuild: opts.compareFrom === "resource" && opts.memo === undefined && !readDocuments });
  const d: Desired = {
    id,
    kind: r.kind,
    name: r.name,
    request: new PlannedRequest(
      request,
      held === "rebuild" ? { from: r, rebuilder: (prep.rebuilder ??= new CompareRebuilder(prep.making, prep.recent)) } : held,
      query,
    ),
    hash,
    dependsOn: dependencies(kindModule(r.kind).references(spec), prep.ids),
    source: { file: r.source.file, line: r.source.line },
    ...(r.annotations[adoptAnnotation] === undefined ? {} : { adopt: r.annotations[adoptAnnotation] }),
    ...(r.annotations[movedFromAnnotation] === undefined ? {} : { movedFrom: r.annotations[movedFromAnnotation] }),
    ...([...sealing].some(([value, placeholder]) => value === placeholder) ? { notDecrypted: true as const } : {}),
  };
  opts.memo?.entries.set(spec, { key: `${memoKey}${read ? "|read" : ""}`, desired: d });
  return d;
}

/** What a resource's secrets add to its memo key: their values, and the fingerprints of those from SOPS files (a value encrypted again is another marker). */
function secretsKey(secrets: ReadonlySet<string>, sealing: ReadonlyMap<string, string>): string {
  if (secrets.size === 0) return "";
  return contentHash([[...secrets].sort(), [...sealing.values()].sort()]);
}

/**
 * How a request keeps its compare: rebuilt from its resource on each read where the caller
 * keeps the resources and rebuilding reads no file; else kept, with its documents held by
 * reference read in when the planner will diff it (`read`).
 */
function heldCompare(
  compare: Record<string, unknown>,
  how: { readonly read: boolean; readonly rebuild: boolean },
): "rebuild" | { readonly compare: Record<string, unknown> } {
  if (how.read) return { compare: materialize(compare) };
  return how.rebuild ? "rebuild" : { compare };
}

const noQuery: Readonly<Record<string, string>> = Object.freeze({});

/** Empty addresses (kinds addressed by server ids alone): one shared object. */
const noAddress: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The redacted request a plan keeps (no body): its compare held as JSON text where it is plain
 * JSON (see json-text.ts) — parsed by each `readCompare()`, a fresh copy — else as itself (a
 * document held by reference), or rebuilt from its resource by a pure `CompareRebuilder`. Every
 * instance has the same shape.
 */
class PlannedRequest implements PlannedRequestView {
  readonly address: Readonly<Record<string, string>>;
  readonly create: KindRequest["create"];
  readonly update: KindRequest["update"];
  readonly query: Readonly<Record<string, string>>;
  readonly ignoredByUpdate: readonly string[] | undefined;
  readonly trigger: string | undefined;
  readonly notes: readonly string[] | undefined;
  /** Text or value; or the resource it is rebuilt from, when `#rebuilder` is set. */
  readonly #compare: string | Readonly<Record<string, unknown>> | Resource;
  readonly #rebuilder: CompareRebuilder | undefined;

  constructor(
    request: KindRequest,
    compare: { readonly compare: Readonly<Record<string, unknown>> } | { readonly from: Resource; readonly rebuilder: CompareRebuilder },
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
      this.#rebuilder = compare.rebuilder;
    } else {
      this.#compare = jsonTextOf(compare.compare) ?? compare.compare;
      this.#rebuilder = undefined;
    }
  }

  readCompare(): Readonly<Record<string, unknown>> {
    if (this.#rebuilder !== undefined) return this.#rebuilder.rebuild(this.#compare as Resource);
    return typeof this.#compare === "string" ? (JSON.parse(this.#compare) as Record<string, unknown>) : (this.#compare as Readonly<Record<string, unknown>>);
  }

  /** Serialised, a plain request. */
  toJSON(): Omit<KindRequest, "body"> {
    return { ...this, compare: this.readCompare() };
  }
}
