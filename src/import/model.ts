/**
 * What an import reads and writes, whatever the source: resources to write (kind, name, spec,
 * annotations, an attached OpenAPI document), and a report entry per source object.
 */
import type { KindName } from "../kinds/kind.js";

/** Where a source object was read: a file (relative to the source it was given as) and a place in it. */
export interface Origin {
  readonly file: string;
  /** A JSON pointer-like path in the file, or the document's index in a multi-document file. */
  readonly at?: string;
}

/** A resource to write, with the secret values already taken out of its spec. */
export interface ImportedResource {
  readonly kind: KindName;
  /** metadata.name before de-duplication: the writer makes names unique per kind. */
  readonly name: string;
  readonly spec: Record<string, unknown>;
  readonly annotations?: Readonly<Record<string, string>>;
  /** An ApiDefinition's OpenAPI document, written beside it and named by spec.definitionFile. */
  readonly document?: unknown;
  readonly origin: Origin;
  /** The source's own identity (its id), for duplicate detection and the report. */
  readonly sourceId: string;
  /** Fields of the source object gatesync does not manage: listed, kept nowhere. */
  readonly unmanaged: readonly string[];
  /** Which source read it (sync-dump, operator, dashboard-export, service-answers). */
  readonly source?: string;
}

/** A secret value found in a source object; `field` is where it sits in the spec (dotted). */
export interface FoundSecret {
  readonly name: string;
  readonly value: string;
  readonly field: string;
}

export type EntryOutcome = "imported" | "skipped" | "error";

/** One line of the report: a source object and what became of it. Never a value. */
export interface ReportEntry {
  readonly origin: Origin;
  readonly source: string;
  readonly outcome: EntryOutcome;
  /** `Kind/name` when imported. */
  readonly as?: string;
  /** How the first plan knows the object: `id` (the kind addresses it) or `adopt` (annotation). */
  readonly identity?: "id" | "adopt";
  readonly reason?: string;
  readonly hint?: string;
  readonly unmanaged?: readonly string[];
  /** Secret fields turned into references (names of the references, never values). */
  readonly secrets?: readonly string[];
}

/** What a source reader gives back: resources, and entries for what it did not import. */
export interface SourceRead {
  readonly resources: ImportedResource[];
  readonly entries: ReportEntry[];
}

export const emptyRead = (): SourceRead => ({ resources: [], entries: [] });

export function mergeReads(reads: readonly SourceRead[]): SourceRead {
  return { resources: reads.flatMap((r) => r.resources), entries: reads.flatMap((r) => r.entries) };
}

export const errorEntry = (origin: Origin, source: string, reason: string, hint?: string): ReportEntry => ({
  origin,
  source,
  outcome: "error",
  reason,
  ...(hint === undefined ? {} : { hint }),
});

export const skipEntry = (origin: Origin, source: string, reason: string, hint?: string): ReportEntry => ({
  origin,
  source,
  outcome: "skipped",
  reason,
  ...(hint === undefined ? {} : { hint }),
});

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** The fields of `object` outside `kept`, sorted: what the report lists as not managed. */
export function unmanagedFields(object: Record<string, unknown>, kept: readonly string[]): string[] {
  return Object.keys(object)
    .filter((k) => !kept.includes(k))
    .sort();
}
