/**
 * A plan's early preparation. A one-shot `plan` used to make every request after the whole
 * repository was validated, on the calling thread alone while the worker threads sat idle.
 * Here the requests of resources whose kind attaches no document (nine in ten of a realistic
 * repository) are made as their files are checked (ValidateOptions.early), on the calling
 * thread, while the workers check the other files.
 *
 * What is made early is a guess checked before use: `prepareDesired` takes it only where it is
 * what it would make now — the same hash key (the caller's check), and the same API id for every
 * name the request looked up (an API whose file was not checked yet was looked up as unknown).
 * Anything else is made again there; a resource the validation refuses is never asked for. The
 * secret lookups are the run's one resolver's, so each reference is still looked up once.
 */
import type { Diagnostic } from "../errors.js";
import type { RequestContext, Spec } from "../kinds/kind.js";
import { kindModule, knownKind } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { contentHash } from "../kinds/canonical.js";
import type { SecretResolver } from "../secrets/resolver.js";
import type { EarlyListener } from "../validate/validation-run.js";
import { requestFor, resolveSpec } from "./outgoing.js";
import { PlannedRequest } from "./desired.js";

/** A request made early, and what it was made from besides its resource. */
export interface EarlyRequest {
  readonly request: PlannedRequest;
  readonly hash: string;
  /** The resources its spec names (for its dependencies). */
  readonly references: ReadonlyArray<{ readonly kind: string; readonly name: string }>;
  /** Each API name it looked up, then the id it got (undefined: not known then). */
  readonly lookups: ReadonlyArray<string | undefined>;
}

/** What making a request needs, known before the validation starts. */
export interface EarlyMaking {
  readonly resolver: SecretResolver;
  readonly hashKey: string;
  readonly appTypeProviders: ReadonlySet<number>;
}

/** Requests made as the validation finds their resources; a listener of one validation. */
export class EarlyRequests implements EarlyListener {
  private readonly made = new Map<Resource, EarlyRequest>();
  /** The API ids declared by the files checked so far. */
  private readonly apis = new Map<string, string>();
  /** How many early requests were taken (the bench and the tests read it). */
  taken = 0;
  /** Resources waiting for the id of an API they name (its file not checked yet), by its name. */
  private readonly waiting = new Map<string, Resource[]>();

  constructor(readonly making: EarlyMaking) {}

  apiId(name: string, id: string): void {
    this.apis.set(name, id);
    const waiting = this.waiting.get(name);
    if (waiting === undefined) return;
    this.waiting.delete(name);
    for (const r of waiting) this.resource(r);
  }

  resource(r: Resource): void {
    try {
      const written = r.spec.read();
      const references = kindModule(r.kind).references(written);
      // made once the ids it needs are known: a request made without one would be made again
      const unknown = references.find((ref) => providesApiIds(ref.kind) && !this.apis.has(ref.name));
      if (unknown !== undefined) {
        const waiting = this.waiting.get(unknown.name);
        if (waiting === undefined) this.waiting.set(unknown.name, [r]);
        else waiting.push(r);
        return;
      }
      const made = this.make(r, written, references);
      if (made !== undefined) this.made.set(r, made);
    } catch {
      // made again, and its failure reported, where the desired set is prepared
    }
  }

  /** The request made early for `r`, when every API id it looked up is the one `apis` gives. */
  take(r: Resource, apis: ReadonlyMap<string, string>): EarlyRequest | undefined {
    const made = this.made.get(r);
    if (made === undefined) return undefined;
    this.made.delete(r);
    for (let i = 0; i < made.lookups.length; i += 2) {
      if (apis.get(made.lookups[i]!) !== made.lookups[i + 1]) return undefined;
    }
    this.taken++;
    return made;
  }

  private make(r: Resource, written: Spec, references: EarlyRequest["references"]): EarlyRequest | undefined {
    const problems: Diagnostic[] = [];
    const { spec, secrets } = resolveSpec(r, this.making.resolver, problems, written);
    // an unresolved reference is reported where the desired set is prepared
    if (problems.length > 0) return undefined;
    const lookups: Array<string | undefined> = [];
    const ctx: RequestContext = {
      apiIdOf: (name) => {
        const id = this.apis.get(name);
        lookups.push(name, id);
        return id;
      },
      appTypeProviders: this.making.appTypeProviders,
    };
    const { request, compare, query } = requestFor(r.kind, spec, secrets, this.making.hashKey, ctx);
    return {
      // a kind without an attached document holds no document by reference: read or not, its compare is the same
      request: new PlannedRequest(request, { compare }, query),
      hash: contentHash(compare),
      references,
      lookups,
    };
  }
}

/** Whether resources of a kind give API ids (that others' requests carry). */
function providesApiIds(kind: string): boolean {
  return knownKind(kind)?.providedApiId !== undefined;
}
