/**
 * What the planner is given of each resource (`Desired`: no secret, no body) and what the apply
 * sends (`Outgoing`, made when it is sent: outgoing.ts). prepare-desired.ts makes both.
 */
import type { Diagnostic, SourceError } from "../errors.js";
import type { KindName, KindRequest } from "../kinds/kind.js";
import type { SecretSource } from "../secrets/resolver.js";
import type { StateSnapshot } from "../record/state.js";

/** The request a plan keeps: no body, and its redacted compare read by a call (see `PlannedRequest`). */
export interface PlannedRequestView extends Omit<KindRequest, "body" | "compare"> {
  /** The redacted compare: a fresh copy on each call; pure (no IO, no secret lookup) and never failing. */
  readCompare(): Readonly<Record<string, unknown>>;
}

export interface Desired {
  readonly id: string;
  readonly kind: KindName;
  readonly name: string;
  /** The request with `compare` and `query` redacted; no body. */
  readonly request: PlannedRequestView;
  /** Content hash of `request.compare` (and the trigger): equal to a record's appliedHash when nothing changed. */
  readonly hash: string;
  readonly dependsOn: readonly string[];
  readonly source: { readonly file: string; readonly line: number };
  /** The server id the `gatesync.dev/adopt` annotation adopts. */
  readonly adopt?: string;
  /** The old name the `gatesync.dev/moved-from` annotation declares (a rename: renames.ts). */
  readonly movedFrom?: string;
  /** Holds SOPS values a plan without the age identity could not decrypt (not-compared.ts). */
  readonly notDecrypted?: true;
}

/** What the apply sends: bodies with secrets, keyed by resource id. Never logged or stored. */
export interface Outgoing {
  readonly body: unknown;
  readonly query: Readonly<Record<string, string>>;
  /** The resolved secret values this resource holds: answers are redacted of them. */
  readonly secrets: ReadonlySet<string>;
}

/** A body made when it is sent: SOURCE_CHANGED when what it is made from no longer matches what was planned. */
export type OutgoingRead = { readonly ok: true; readonly value: Outgoing } | { readonly ok: false; readonly error: SourceError };

/** The bodies the apply sends, made when read (see `prepareDesired`, prepare-desired.ts). */
export interface OutgoingRequests {
  /** The body of `id` (undefined when the set has no such resource); it may fail: a document changed since it was validated. */
  read(id: string): OutgoingRead | undefined;
  /** The secret values the body of `id` held when it was last sent (an answer is redacted of them); made now if it was not lately. */
  secretsOf(id: string): ReadonlySet<string>;
}

/** The body of a read, or its failure thrown (for callers that stop on it). */
export function outgoingOrThrow(read: OutgoingRead | undefined): Outgoing | undefined {
  if (read === undefined) return undefined;
  if (!read.ok) throw read.error;
  return read.value;
}

export interface DesiredSet {
  readonly desired: Desired[];
  /** The desired resource of an id (one index for the whole set, shared by every reader). */
  readonly find: (id: string) => Desired | undefined;
  readonly outgoing: OutgoingRequests;
  readonly diagnostics: Diagnostic[];
}

export interface PrepareOptions {
  /** Where references are looked up: asked once per reference (a `SecretResolver` shared with validation keeps it once per run). */
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
  /**
   * The state the plan will compare with: the documents held by reference of a resource whose
   * content hash differs from its record's are read here, so that the planner diffs them
   * without reading a file. Without it, the planner reads them where it diffs them.
   */
  readonly state?: StateSnapshot;
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
