/**
 * From a resource to what is planned and sent: its spec with secrets resolved (through the
 * run's `SecretResolver`: each reference was looked up once, before planning), its request,
 * the redacted compare a plan keeps. An apply's bodies are made when they are sent (the plan
 * keeps none) and checked against the planned hashes; a request's compare may be rebuilt the
 * same way instead of being kept as text beside the resource (PrepareOptions.compareFrom).
 * Rebuilding is pure: the resolver answers from what it looked up, and a resource whose
 * documents had to be read for it is never rebuilt (its compare is kept).
 */
import { JsonText } from "../deferred.js";
import { ErrorCode, SourceError } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import { contentHash } from "../kinds/canonical.js";
import { materialize } from "../kinds/document-ref.js";
import type { KindName, KindRequest, RequestContext, Spec } from "../kinds/kind.js";
import { kindModule } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import { redact } from "../secrets/markers.js";
import { resolveSecrets } from "../secrets/resolver.js";
import type { FoundSecrets, SecretResolver } from "../secrets/resolver.js";
import type { Sealing } from "../secrets/sealed-values.js";
import type { Desired, OutgoingRead, OutgoingRequests } from "./desired.js";

/** A spec with its secret references resolved, the values they resolved to, and whether documents held by reference were read for it. */
export interface ResolvedSpec {
  /** The spec as written (read once from the resource). */
  readonly written: Spec;
  readonly spec: Spec;
  readonly secrets: Set<string>;
  /** The SOPS values among `secrets`, by their placeholders (sealed-values.ts). */
  readonly sealing: Map<string, string>;
  readonly readDocuments: boolean;
}

/** One resource's spec, read once, with its secret references resolved, and the values they resolved to. */
export function resolveSpec(r: Resource, resolver: SecretResolver, problems: Diagnostic[]): ResolvedSpec {
  const written = r.spec.read();
  // parsed from JSON text, a spec holds no document by reference
  const text = r.spec instanceof JsonText ? r.spec.text : undefined;
  // and without `${` it has no reference to resolve, nor a `$${` to unescape: one scan of the
  // text instead of a walk of every value
  if (text !== undefined && !text.includes("${")) return { written, spec: written, secrets: new Set<string>(), sealing: new Map(), readDocuments: false };
  const found: FoundSecrets = { values: new Set<string>(), sealing: new Map<string, string>() };
  const { values: secrets, sealing } = found;
  const resolved = resolveSecrets(written, resolver, found, (path, message) =>
    problems.push({
      severity: "error",
      code: ErrorCode.SECRET_UNRESOLVED,
      file: r.source.file,
      resource: resourceId(r),
      path: formatPath(["spec", ...path]),
      message,
      hint: "set it where gatesync plans and applies",
    }),
  ) as Spec;
  if (secrets.size === 0 || text !== undefined) return { written, spec: resolved, secrets, sealing, readDocuments: false };
  // a resource holding secrets is redacted wherever they appear: a document held by reference is read for it
  const read = materialize(resolved);
  return { written, spec: read, secrets, sealing, readDocuments: read !== resolved };
}

/** The request of a resolved spec, and its parts redacted for the plan. */
export function requestFor(
  kindName: KindName,
  spec: Spec,
  secrets: ReadonlySet<string>,
  sealing: Sealing,
  hashKey: string,
  ctx: RequestContext,
): { request: KindRequest; compare: Record<string, unknown>; query: Record<string, string> } {
  const kind = kindModule(kindName);
  const request = kind.request(spec, ctx);
  const compare = redact(request.compare, hashKey, kind.secretFields, secrets, sealing) as Record<string, unknown>;
  const query = redact(request.query, hashKey, [], secrets, sealing) as Record<string, string>;
  return { request, compare, query };
}

/** A resource not in the set holds no secret. */
export const noSecrets: ReadonlySet<string> = new Set<string>();

/** A resource's request made from its spec: the request, the redacted compare, the secret values it holds. */
interface MadeRequest {
  readonly request: KindRequest;
  readonly compare: Record<string, unknown>;
  readonly secrets: ReadonlySet<string>;
}

/** What making a resource's request needs besides the resource. */
export interface RequestMaking {
  readonly resolver: SecretResolver;
  readonly hashKey: string;
  readonly ctx: RequestContext;
}

/** A resource's request made again from its spec; SOURCE_CHANGED when a reference no longer resolves. */
function makeRequest(r: Resource, making: RequestMaking): MadeRequest {
  const problems: Diagnostic[] = [];
  const { spec, secrets, sealing } = resolveSpec(r, making.resolver, problems);
  if (problems.length > 0) throw sourceChanged(r);
  return { ...requestFor(r.kind, spec, secrets, sealing, making.hashKey, making.ctx), secrets };
}

/**
 * The requests made for the latest bodies sent — beyond the calls in flight — with the compare
 * they were checked against and the secrets they held: the records of a call (the intent, the
 * verdict, the answer's redaction) read what was sent instead of making it again. Oldest
 * first, bounded.
 */
export class RecentlySent {
  static readonly size = 4096;
  readonly #entries = new Map<Resource, MadeRequest>();

  remember(r: Resource, made: MadeRequest): void {
    this.#entries.delete(r);
    this.#entries.set(r, made);
    if (this.#entries.size > RecentlySent.size) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get(r: Resource): MadeRequest | undefined {
    return this.#entries.get(r);
  }
}

/**
 * Rebuilds a request's compare from its resource (see PrepareOptions.compareFrom), unless its
 * body was sent lately. Pure: no lookup (the resolver answers from the run's), no file read
 * (resources whose documents were read for their secrets keep their compare instead).
 */
export class CompareRebuilder {
  constructor(
    private readonly making: RequestMaking,
    private readonly recent: RecentlySent,
  ) {}

  rebuild(r: Resource): Record<string, unknown> {
    return (this.recent.get(r) ?? makeRequest(r, this.making)).compare;
  }
}

function sourceChanged(r: Resource): SourceError {
  return new SourceError(ErrorCode.SOURCE_CHANGED, `${resourceId(r)}: what ${r.source.file} resolves to changed after it was planned`, {
    hint: "a file or secret the resource uses changed while gatesync was running: nothing of it was sent; run again",
  });
}

/** The bodies an apply sends, made from the resources when read and checked against the planned hashes. */
export class BodiesToSend implements OutgoingRequests {
  /**
   * `sources[i]` is the resource `desired[i]` was prepared from; `index` is the position of each
   * desired resource (by its own id string): one map entry per resource, no object.
   */
  constructor(
    private readonly desired: readonly Desired[],
    private readonly sources: readonly Resource[],
    private readonly index: ReadonlyMap<string, number>,
    private readonly making: RequestMaking,
    private readonly recent: RecentlySent,
  ) {}

  read(id: string): OutgoingRead | undefined {
    const i = this.index.get(id);
    if (i === undefined) return undefined;
    const r = this.sources[i]!;
    let made: MadeRequest;
    try {
      made = makeRequest(r, this.making);
    } catch (error) {
      // a document held by reference that changed since it was validated (document-ref.ts)
      if (error instanceof SourceError) return { ok: false, error };
      throw error;
    }
    if (contentHash(made.compare) !== this.desired[i]!.hash) return { ok: false, error: sourceChanged(r) };
    this.recent.remember(r, made);
    return { ok: true, value: { body: made.request.body, query: made.request.query, secrets: made.secrets } };
  }

  secretsOf(id: string): ReadonlySet<string> {
    const i = this.index.get(id);
    if (i === undefined) return noSecrets;
    const r = this.sources[i]!;
    return this.recent.get(r)?.secrets ?? makeRequest(r, this.making).secrets;
  }
}
