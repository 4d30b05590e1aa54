/**
 * What a parse of a YAML (or JSON) file is bound by and what it gives, whichever parser answers:
 * the value-only one (fast-yaml.ts) or `yaml` (yaml-reader.ts).
 */
export interface ReadLimits {
  /** Largest alias expansion count accepted in one document. */
  readonly maxAliasCount: number;
  /** Deepest nesting of maps and sequences accepted. */
  readonly maxDepth: number;
  /** Most documents one file may hold, empty ones included. */
  readonly maxDocumentsPerFile: number;
}

export const defaultReadLimits: ReadLimits = { maxAliasCount: 100, maxDepth: 128, maxDocumentsPerFile: 1000 };

export interface ParsedDocument {
  /** 0-based index of the document in its file. */
  readonly index: number;
  readonly value: unknown;
  /** 1-based line where the document starts. */
  readonly line: number;
}
