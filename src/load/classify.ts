/**
 * What one parsed document is: a resource of a known kind, a document some kind carries in a
 * file of its own (an OpenAPI document), a SOPS-encrypted file (read only through `${sops:}`,
 * never as a resource), or neither — said with a located finding.
 */
import { closest } from "fastest-levenshtein";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import type { AttachedDocument, KindModule } from "../kinds/kind.js";
import { isKindName, kindModule, kindNames } from "../kinds/registry.js";
import { hasSopsMetadata } from "../secrets/sops/sops-format.js";
import { similar } from "../text/similar.js";
import type { ParsedDocument } from "./parsed-yaml.js";

export type DocumentClass =
  | { readonly role: "resource"; readonly kind: KindModule; readonly value: Record<string, unknown>; readonly name: string | undefined }
  /** Not a resource, but looks like a document that `of` carries: valid only where a resource names its file. */
  | { readonly role: "attachment"; readonly of: AttachedDocument; readonly warning: Diagnostic }
  /** A SOPS file (its `sops` metadata): secrets that references read, not a resource, and not an error. */
  | { readonly role: "sops" }
  | { readonly role: "invalid"; readonly diagnostic: Diagnostic };

/** Locates a field of the document, for the finding of an unknown kind. */
export type FieldLocator = (path: readonly string[]) => { line?: number; column?: number };

export function classifyDocument(file: string, doc: ParsedDocument, locate: FieldLocator): DocumentClass {
  const at = { file, line: doc.line, column: 1 };
  const v = doc.value;
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return invalid({
      ...at,
      code: ErrorCode.NOT_A_RESOURCE,
      message: "document is not a mapping, so not a resource",
      hint: "a resource has apiVersion, kind, metadata and spec",
    });
  }
  const value = v as Record<string, unknown>;
  if (!("kind" in value) && !("apiVersion" in value)) {
    if (hasSopsMetadata(value)) return { role: "sops" };
    const attached = kindNames.map((k) => kindModule(k).attached).find((a) => a?.looksLike(value) === true);
    if (attached !== undefined) {
      return {
        role: "attachment",
        of: attached,
        warning: { severity: "warning", code: ErrorCode.NOT_A_RESOURCE, ...at, message: attached.unnamed.message, hint: attached.unnamed.hint },
      };
    }
    return invalid({
      ...at,
      code: ErrorCode.NOT_A_RESOURCE,
      message: "document has no `kind` and no `apiVersion`: not a gatesync resource",
      hint: `start it with apiVersion: gatesync.dev/v1 and kind: one of ${kindNames.join(", ")}`,
    });
  }
  if (!isKindName(value.kind)) {
    const guess = typeof value.kind === "string" ? closest(value.kind, [...kindNames]) : undefined;
    const didYouMean = guess !== undefined && typeof value.kind === "string" && similar(value.kind, guess) ? ` (did you mean \`${guess}\`?)` : "";
    return invalid({
      file,
      ...locate(["kind"]),
      code: ErrorCode.UNKNOWN_KIND,
      message: value.kind === undefined ? "missing required field `kind`" : `unknown kind ${JSON.stringify(value.kind)}`,
      hint: `kind must be one of: ${kindNames.join(", ")}${didYouMean}`,
    });
  }
  const name = (value.metadata as Record<string, unknown> | undefined)?.name;
  return { role: "resource", kind: kindModule(value.kind), value, name: typeof name === "string" ? name : undefined };
}

function invalid(d: Omit<Diagnostic, "severity">): DocumentClass {
  return { role: "invalid", diagnostic: { severity: "error", ...d } };
}
