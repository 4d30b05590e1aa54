/**
 * The bodies an apply sends, resolved again from the resources when they are sent (the plan
 * keeps none), checked against the planned hashes; and a request's compare made again the same
 * way (PrepareOptions.compareFrom). What was resolved lately is what the records of its call read.
 */
import { ErrorCode, SourceError } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../field-path.js";
import { contentHash } from "../kinds/canonical.js";
import { materialize } from "../kinds/document-ref.js";
import type { KindName, KindRequest, RequestContext, Spec } from "../kinds/kind.js";
import { kindModule } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import { redact } from "../kinds/sensitive.js";
import type { SecretSource } from "../load/secret-refs.js";
import type { Desired, Outgoing, OutgoingRequests, PrepareOptions } from "./desired.js";
import { resolveSecrets } from "./resolve-secrets.js";

/** One resource's spec with its secret references resolved, and the values they resolved to. */
export function resolveSpec(r: Resource, spec: Spec, source: SecretSource, problems: Diagnostic[]): { spec: Spec; secrets: Set<string> } {
  const id = resourceId(r);
  const secrets = new Set<string>();
  const resolved = resolveSecrets(spec, source, secrets, (path, message) =>
    problems.push({
      severity: "error",
      code: ErrorCode.SECRET_UNRESOLVED,
      file: r.source.file,
      resource: id,
      path: formatPath(["spec", ...path]),
      message,
      hint: "set it where gatesync plans and applies",
    }),
  ) as Spec;
  // a resource holding secrets is redacted wherever they appear: a document held by reference is read for it
  return { spec: secrets.size === 0 ? resolved : materialize(resolved), secrets };
}

/** The request of a resolved spec, and its parts redacted for the plan. */
export function requestFor(
  kindName: KindName,
  spec: Spec,
  secrets: ReadonlySet<string>,
  hashKey: string,
  ctx: RequestContext,
): { request: KindRequest; compare: Record<string, unknown>; query: Record<string, string> } {
  const kind = kindModule(kindName);
  const request = kind.request(spec, ctx);
  const compare = redact(request.compare, hashKey, kind.secretFields, secrets) as Record<string, unknown>;
  const query = redact(request.query, hashKey, [], secrets) as Record<string, string>;
  return { request, compare, query };
}

/** A resource not in the set holds no secret. */
export const noSecrets: ReadonlySet<string> = new Set<string>();

/** What a body resolved again gives: its request, the redacted compare, the secret values it holds. */
interface Resolved {
  readonly request: KindRequest;
  readonly compare: Record<string, unknown>;
  readonly secrets: ReadonlySet<string>;
}

/** A resource's request resolved again from its spec; SOURCE_CHANGED when a reference no longer resolves. */
function resolveAgain(r: Resource, opts: PrepareOptions, ctx: RequestContext): Resolved {
  const problems: Diagnostic[] = [];
  const { spec, secrets } = resolveSpec(r, r.spec.read(), opts.secrets, problems);
  if (problems.length > 0) throw sourceChanged(r);
  return { ...requestFor(r.kind, spec, secrets, opts.hashKey, ctx), secrets };
}

/**
 * The bodies resolved lately — beyond the calls in flight — with what they were checked against
 * and the secrets they held: the records of a call (the intent, the verdict, the answer's
 * redaction) read what was sent instead of resolving the body again. Oldest first, bounded.
 */
export class ResolvedLately {
  static readonly size = 4096;
  readonly #entries = new Map<Resource, Resolved>();

  remember(r: Resource, resolved: Resolved): void {
    this.#entries.delete(r);
    this.#entries.set(r, resolved);
    if (this.#entries.size > ResolvedLately.size) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get(r: Resource): Resolved | undefined {
    return this.#entries.get(r);
  }
}

/** Makes a request's compare again from its resource on each read (see PrepareOptions.compareFrom), unless its body was resolved lately. */
export class RemadeCompare {
  constructor(
    private readonly opts: PrepareOptions,
    private readonly ctx: RequestContext,
    private readonly recent: ResolvedLately,
  ) {}

  make(r: Resource): Record<string, unknown> {
    return (this.recent.get(r) ?? resolveAgain(r, this.opts, this.ctx)).compare;
  }
}

function sourceChanged(r: Resource): SourceError {
  return new SourceError(ErrorCode.SOURCE_CHANGED, `${resourceId(r)}: what ${r.source.file} resolves to changed after it was planned`, {
    hint: "a file or secret the resource uses changed while gatesync was running: nothing of it was sent; run again",
  });
}

/** Bodies resolved on request from the resources, checked against the planned hashes. */
export class ResolvedRequests implements OutgoingRequests {
  /**
   * `sources[i]` is the resource `desired[i]` was prepared from; `index` is the position of each
   * desired resource (by its own id string): one map entry per resource, no object.
   */
  constructor(
    private readonly desired: readonly Desired[],
    private readonly sources: readonly Resource[],
    private readonly index: ReadonlyMap<string, number>,
    private readonly opts: PrepareOptions & { readonly ctx: RequestContext; readonly recent: ResolvedLately },
  ) {}

  get(id: string): Outgoing | undefined {
    const i = this.index.get(id);
    if (i === undefined) return undefined;
    const r = this.sources[i]!;
    const resolved = resolveAgain(r, this.opts, this.opts.ctx);
    if (contentHash(resolved.compare) !== this.desired[i]!.hash) throw sourceChanged(r);
    this.opts.recent.remember(r, resolved);
    return { body: resolved.request.body, query: resolved.request.query, secrets: resolved.secrets };
  }

  secretsOf(id: string): ReadonlySet<string> {
    const i = this.index.get(id);
    if (i === undefined) return noSecrets;
    return this.opts.recent.get(this.sources[i]!)?.secrets ?? this.get(id)!.secrets;
  }
}
