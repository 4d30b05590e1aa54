import type { Deferred } from "../deferred.js";
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
   * into `definition` (the path stays, for display). The one-shot commands hold it as its
   * JSON text (`JsonText`: parsed on each read, a fresh copy), the daemon as the value
   * (`HeldValue`); either way `read()` cannot fail.
   */
  readonly spec: Deferred<Spec>;
  readonly source: ResourceSource;
  /** For an ApiDefinition with `definitionFile`: where its document came from. */
  readonly definitionSource?: ResourceSource;
}

/** `Kind/name`, the address of a resource in messages, plans and state. */
export function resourceId(r: { kind: string; name: string }): string {
  return `${r.kind}/${r.name}`;
}
