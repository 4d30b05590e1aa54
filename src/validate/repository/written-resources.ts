/**
 * What the cross-checks read of every resource written in the repository, valid or not
 * (cross-checks.ts): made from the checked files' documents once their resources are made.
 */
import { HeldValue, JsonText } from "../../deferred.js";
import type { Spec } from "../../kinds/kind.js";
import type { Resource } from "../../kinds/resource.js";
import type { DocumentVerdict, FileVerdict } from "../file/check-file.js";
import type { WrittenResource } from "./cross-checks.js";

/** A document as written, valid or not: its spec an object (`{}` when it is not one), read from its text on each use when it came as text. */
function writtenResource(file: FileVerdict, doc: DocumentVerdict): WrittenResource {
  const base = { kind: doc.kind!, name: doc.name!, source: { file: file.path, index: doc.index, line: doc.line } };
  if (doc.text !== undefined) return { ...base, spec: new JsonText<Spec>(doc.text.spec) };
  const spec = (doc.value as { spec?: unknown }).spec;
  return { ...base, spec: new HeldValue((spec !== null && typeof spec === "object" && !Array.isArray(spec) ? spec : {}) as Spec) };
}

/** A document of a checked file. */
export interface DocumentAt {
  readonly file: FileVerdict;
  readonly doc: DocumentVerdict;
}

/**
 * Every resource written, valid or not, in file order (`candidates` are some of `named`, in the
 * same order, and `made` what each candidate became). A document made into a resource from its
 * JSON text (a one-shot command) stands as that resource — the same kind, name, place and spec
 * text — not as a second object made for it: at 100,000 resources those raised the peak of a
 * validation, which comes at its end, by ~28 MB (340 against 368 MB, `/usr/bin/time`).
 */
export function writtenOf(named: readonly DocumentAt[], candidates: readonly DocumentAt[], made: ReadonlyArray<Resource | undefined>): WrittenResource[] {
  const written: WrittenResource[] = [];
  let k = 0;
  for (const { file, doc } of named) {
    const resource = candidates[k]?.doc === doc ? made[k++] : undefined;
    written.push(resource !== undefined && doc.text !== undefined ? resource : writtenResource(file, doc));
  }
  return written;
}
