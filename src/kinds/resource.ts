import type { KindName, Spec } from "./kind.js";

/** Where a resource was written. */
export interface ResourceSource {
  /** File, relative to the resource root. */
  readonly file: string;
  /** 0-based index of the document in the file. */
  readonly index: number;
  /** 1-based line where the document starts. */
  readonly line: number;
}

/** A validated resource: the unit gatesync plans and applies. */
export interface Resource {
  readonly apiVersion: string;
  readonly kind: KindName;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /**
   * The spec as written, except that an ApiDefinition's `definitionFile` has been read
   * into `definition` (the path stays, for display).
   */
  readonly spec: Spec;
  readonly source: ResourceSource;
  /** For an ApiDefinition with `definitionFile`: where its document came from. */
  readonly definitionSource?: ResourceSource;
}

/** `Kind/name`, the address of a resource in messages, plans and state. */
export function resourceId(r: { kind: string; name: string }): string {
  return `${r.kind}/${r.name}`;
}

/**
 * A resource whose spec is held as JSON text (plain JSON data only: see json-text.ts) and
 * parsed on each read — a fresh copy each time, so a reader that needs it twice keeps it in a
 * local. What one-shot commands hold of 100,000 resources: a few hundred bytes each instead of
 * the spec's object tree. Every instance has the same shape (one hidden class for all).
 */
export class TextResource implements Resource {
  readonly apiVersion: string;
  readonly kind: KindName;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly source: ResourceSource;
  readonly #spec: string;

  /** For kinds without an attached document (no `definitionSource`). */
  constructor(fields: Omit<Resource, "spec" | "definitionSource">, specText: string) {
    this.apiVersion = fields.apiVersion;
    this.kind = fields.kind;
    this.name = fields.name;
    this.labels = fields.labels;
    this.annotations = fields.annotations;
    this.source = fields.source;
    this.#spec = specText;
  }

  get spec(): Spec {
    return JSON.parse(this.#spec) as Spec;
  }

  /** Serialised (and shown by deep equality's diff), it is a plain resource. */
  toJSON(): Resource {
    return { ...this, spec: this.spec };
  }
}
