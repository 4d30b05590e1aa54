/**
 * What gatesync knows about one resource kind. A new kind is one module implementing this
 * interface, listed in `kindModules` (`registry.ts`), plus one schema in `schemas/`: its name
 * comes from the module (docs/dev/adding-a-kind.md).
 */
import type { InterfaceName, OperationName } from "../contract/operations.js";
import type { ErrorCode, Severity } from "../errors.js";
import type { PathSegment } from "../text/field-path.js";
import type { ClassifiedChange } from "./breaking/types.js";
// type circle: a kind's name is what the registry lists (registry.ts imports each module, which
// imports this file's types) — declared here it would be a second list of the kinds to keep in step
import type { kindModules } from "./registry.js";

export type { InterfaceName };

/** The name of a registered kind: the `kind` of a module in `kindModules`. */
export type KindName = (typeof kindModules)[number]["kind"];

export type Spec = Readonly<Record<string, unknown>>;

/** A reference by name from one resource to another. */
export interface ResourceReference {
  /** Where the reference is written, from the resource root (e.g. ["spec","apiRef"]). */
  readonly path: readonly PathSegment[];
  readonly kind: KindName;
  readonly name: string;
}

/** A finding of a kind's own rules (beyond its JSON Schema), relative to the resource root. */
export interface RuleFinding {
  readonly path: readonly PathSegment[];
  readonly message: string;
  readonly hint?: string;
  readonly severity?: Severity;
  readonly code?: ErrorCode;
  /** Point at the key rather than the value. */
  readonly key?: boolean;
}

/** What a kind's rules may consult beyond the resource itself. */
export interface RuleContext {
  /** Identity providers that register applications by type (gatesync.yaml), when known. */
  readonly appTypeProviders: ReadonlySet<number> | undefined;
}

/** Looks up the gateway API id of an ApiDefinition by resource name. */
export type ApiIdLookup = (name: string) => string | undefined;

/** What building a request may consult beyond the spec. */
export interface RequestContext {
  readonly apiIdOf: ApiIdLookup;
  /** Identity providers that register applications by type. */
  readonly appTypeProviders: ReadonlySet<number>;
}

/** How a resource is written to its server: a pure function of its (resolved) spec. */
export interface KindRequest {
  /** Path parameters known before applying (server-assigned ids come from the state). */
  readonly address: Readonly<Record<string, string>>;
  /** Operation that creates the object; undefined when the interfaces cannot create it. */
  readonly create: OperationName | undefined;
  /** Operation that changes an existing object; undefined when they cannot update it. */
  readonly update: OperationName | undefined;
  /** Query parameters of the call. */
  readonly query: Readonly<Record<string, string>>;
  /** The whole object sent (operations that replace wholesale get every field). */
  readonly body: unknown;
  /**
   * What changes are measured on: the request normalised (defaults filled in, equivalent
   * spellings unified) without fields the server derives or overwrites.
   */
  readonly compare: Readonly<Record<string, unknown>>;
  /** Fields of `compare` the update ignores: a change to them alone cannot be applied. */
  readonly ignoredByUpdate?: readonly string[] | undefined;
  /** OrgKey: the quota reset trigger (a reset is sent when it changes). */
  readonly trigger?: string | undefined;
  /** Explanations shown with the change (e.g. fields a provider derives). */
  readonly notes?: readonly string[] | undefined;
}

/** How an object that left the repository is switched off (no interface deletes anything). */
export interface DeactivationRefusal {
  readonly reason: string;
  readonly hint: string;
}

export interface Deactivation {
  readonly operation: OperationName;
  /** The field switched off, as the plan shows it, its value after, and the plan's words for that. */
  readonly field: string;
  before(applied: Spec): unknown;
  readonly after: unknown;
  readonly effect: string;
  /** Who loses what when it is switched off, as the plan's breaking change says it ("its callers lose it"). */
  readonly loss: string;
  /** The query of the switching-off call, from the last applied request. */
  query(applied: Spec): Readonly<Record<string, unknown>>;
  /**
   * The last applied request switched off, or undefined when it cannot be resent as it is
   * (sensitive values, which the state does not keep, are refused before this is asked).
   * `address`: the object's path parameters.
   */
  body(applied: Spec, address: Readonly<Record<string, string>>): unknown;
  /** A note for the plan about how this object is switched off, when there is something to say. */
  note?(applied: Spec): string | undefined;
  /**
   * What the plan says when it cannot be switched off: why, and how to do it by hand — fixed, or
   * made from the record (a hint that holds what to write back).
   */
  readonly refusal: DeactivationRefusal | ((applied: Spec, address: Readonly<Record<string, string>>) => DeactivationRefusal);
  /** Switching it on again (a deactivated object declared anew). */
  readonly reactivation: Reactivation;
}

/** See KindModule.objectKeys; a key is absent when the request or record does not give it. */
export interface ObjectKeys {
  readonly address?: string;
  readonly content?: string;
}

/** How a deactivated object is switched on again when the repository declares it anew. */
export interface Reactivation {
  /** The spec itself asks for the object switched off (then nothing is switched on). */
  declaresInactive(compare: Spec): boolean;
  /** The body that switches it on, from the body the spec sends (`query`: the call's query). */
  body(sent: unknown, address: Readonly<Record<string, string>>, query: Readonly<Record<string, unknown>>): unknown;
  /** Why no write built from this spec can switch it on (the plan blocks it), or undefined. */
  refusal?(compare: Spec, address: Readonly<Record<string, string>>): { readonly reason: string; readonly hint: string } | undefined;
}

/** An id the server assigns when it creates the object. */
export interface ServerId {
  /** Reads it from the create's answer (undefined when the answer carries none). */
  read(answer: unknown): string | undefined;
  /** The path parameter later updates carry it in. */
  readonly param?: string;
}

/** One post-apply check's result. */
export interface CheckResult {
  readonly method: string;
  readonly path: string;
  readonly expected: number;
  /** 0 when no answer came for it. */
  readonly status: number;
  readonly ok: boolean;
}

/** The health of a resource after an apply: the result of its kind's post-apply checks. */
export interface HealthResult {
  readonly id: string;
  readonly ok: boolean;
  readonly checkedAt: string;
  readonly checks: readonly CheckResult[];
  /** Why the checks could not run, when they could not. */
  readonly error?: string;
  /** A failed check's answer, bounded and scrubbed (apply/health-text.ts): what the route said. */
  readonly excerpt?: string;
}

/** The answer to a post-apply check request: a status and its parsed body, or why there is none. */
export type CheckAnswer = { readonly status: number; readonly body: unknown } | { readonly error: string };

/**
 * Checks run after a resource of this kind was applied, as one request to its interface. Pure:
 * the kind says what to send (`anonymous`: without the interface credential) and reads the
 * answer; the apply sends it.
 */
export interface PostApplyChecks {
  /** The request, `{ error }` when the checks cannot run, or undefined when the spec asks for none. */
  request(
    spec: Spec,
  ): { readonly method: string; readonly path: string; readonly body: unknown; readonly anonymous?: boolean } | { readonly error: string } | undefined;
  /** The checks' results from the answer. */
  results(spec: Spec, answer: CheckAnswer): { readonly checks: readonly CheckResult[]; readonly error?: string };
  /**
   * Whether the spec asks for checks other than those of the recorded health: a check added or
   * changed runs at the next apply although the object itself did not change.
   */
  changed?(spec: Spec, recorded: readonly unknown[] | undefined): boolean;
}

/**
 * A document a resource carries besides its spec (ApiDefinition: its OpenAPI body), written
 * inline or in a file the spec names. Loading reads the file; validation checks the document
 * against `schema`, then by `format`, then by `check`; the resource then carries it `attach`ed.
 */
export interface AttachedDocument {
  /** The file named by the spec, relative to the resource's file, as written. */
  file(spec: Spec): string | undefined;
  /** Where that name is written, from the resource root. */
  readonly fileField: readonly PathSegment[];
  /** Where an inline document is written, from the resource root. */
  readonly inlineField: readonly PathSegment[];
  /** The schema (file#/pointer under `schemas/`) a document must match. */
  readonly schema: string;
  /** The format checker that runs after the schema passed. */
  readonly format: "openapi";
  /** Whether a document without `kind` looks like one (a file some resource may name). */
  looksLike(value: Readonly<Record<string, unknown>>): boolean;
  /** What to say about such a document that no resource names. */
  readonly unnamed: { readonly message: string; readonly hint: string };
  /** Rules between the document and the spec; paths from the document's root. */
  check(document: unknown, spec: Spec): RuleFinding[];
  /** The spec with the document in place (a DocumentRef when the document is held by reference). */
  attach(spec: Spec, document: unknown): Spec;
  /**
   * Top-level members kept in memory whatever their size when the document is held by
   * reference (what `check`, the request and post-apply checks read of it).
   */
  readonly heldMembers: readonly string[];
}

/** The route as the operator configured it (gatesync.yaml), and the setting that names it, for messages. */
export interface ReservedBatchRoute {
  readonly listenPath: string;
  /** The loopback API's id, when the operator gives it (`targets.gateway.batch.apiId`). */
  readonly apiId?: string;
  /** Where the setting is: `targets.gateway.batch` in gatesync.yaml, or an environment's. */
  readonly setting: string;
}

/** A field of a resource that points at the batch route, and why. */
export interface BatchRouteClaim {
  readonly path: readonly PathSegment[];
  readonly message: string;
}

/**
 * A kind's hook (KindModule.batchRoute; batch-route.ts holds the rules): the fields of a spec that address the route's loopback
 * API (validate refuses them), and whether applying a spec may change it (the apply then sends
 * directly).
 */
export interface BatchRouteHook {
  claims(spec: Spec, route: ReservedBatchRoute): BatchRouteClaim[];
  mayChange(spec: Spec, route: ReservedBatchRoute): boolean;
}

/** `K`: the kind's name, written once, in its module (`KindModule<"OrgKey">`). */
export interface KindModule<K extends string = KindName> {
  readonly kind: K;
  /** File name under `schemas/`. */
  readonly schemaFile: string;
  readonly interface: InterfaceName;
  /** One line for listings. */
  readonly summary: string;
  /**
   * Spec fields whose values are secret: dotted paths below `spec`, `*` matching any one
   * key. A secret field's whole subtree is secret. Values holding `${env:}`/`${file:}`
   * references are secret wherever they are.
   */
  readonly secretFields: readonly string[];
  /** Spec fields the server sets or rewrites: never compared, never sent. */
  readonly serverOwnedFields: readonly string[];
  /** Deprecated spec field → its replacement. */
  readonly deprecatedFields: Readonly<Record<string, string>>;
  /** References by name to other resources. */
  references(spec: Spec): ResourceReference[];
  /**
   * The server object this resource addresses, when known before applying
   * (two resources with the same identity would fight over one object).
   */
  identity(spec: Spec, apiIdOf: ApiIdLookup): string | undefined;
  /** Rules JSON Schema cannot express. */
  check(spec: Spec, ctx: RuleContext): RuleFinding[];
  /** The request that writes this resource (spec with secrets resolved). */
  request(spec: Spec, ctx: RequestContext): KindRequest;
  /** Why a change cannot be applied once the object exists, and what the user can do. */
  readonly noUpdate?: { readonly reason: string; readonly hint: string };
  /** Objects the server names on create (they, and only they, can be adopted: `isAdoptable`). */
  readonly serverId?: ServerId;
  /**
   * The server refuses an exact duplicate of a create with `status`: a create whose outcome is
   * in doubt is settled by sending it again (2xx: it was not there; `status`: the earlier create
   * happened). `sameObject` says whether the create in doubt and the one to send address the
   * same object (otherwise the plan keeps it blocked).
   */
  readonly settlesByResend?: {
    readonly status: number;
    sameObject(attempted: Readonly<Record<string, unknown>>, compare: Readonly<Record<string, unknown>>): boolean;
    /** What the record says when the duplicate refusal settled it. */
    readonly note: string;
  };
  /** How an orphan is switched off under `orphans: deactivate`; absent when it cannot be. */
  readonly deactivation?: Deactivation;
  /**
   * The server object a request (or a record: its address and what was applied) stands for
   * (docs/user/renames.md): a new resource and an orphaned record with a key in common are one object
   * under two names. `address`: the id the calls address (certain: an undeclared rename is
   * followed); `content`: what names an object the server ids itself (a product's Name: a
   * likeness, so an undeclared rename is blocked rather than followed or duplicated).
   */
  objectKeys(address: Readonly<Record<string, string>>, compare: Readonly<Record<string, unknown>>): ObjectKeys;
  /** Checks run after an apply of this kind; their result is the resource's health. */
  readonly postApply?: PostApplyChecks;
  /** For a kind whose objects can move the gateway's batch route (kinds/batch-route.ts); absent: it cannot. */
  readonly batchRoute?: BatchRouteHook;
  /** The document this kind carries besides its spec, if any. */
  readonly attached?: AttachedDocument;
  /**
   * What an update does to whoever uses the object — breaking, non-breaking, an annotation or
   * unclassified, each change with its path and reason — so reviewers see what a merge takes
   * away. `before` and `after` are the compared specs. Absent: the kind's updates are not classified.
   */
  readonly classifyUpdate?: (before: Spec, after: Spec) => ClassifiedChange[];
  /**
   * The gateway API id this resource gives the resources that reference it by name (`apiRef`):
   * requests carry the id, not the name. Absent: nothing refers to this kind's resources by API id.
   */
  providedApiId?(spec: Spec): string | undefined;
  /**
   * The gateway API ids a request's compare lists without writing them (a product's APIDetails,
   * an org key's access rights): references the ownership check says cross owners
   * (plan/ownership-check.ts). Absent: none beyond its address's `apiID`.
   */
  referencedApiIds?(compare: Readonly<Record<string, unknown>>): string[];
}
