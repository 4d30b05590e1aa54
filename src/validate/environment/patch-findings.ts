/**
 * Findings about what an overlay patch set are the patch's: located at the member of the patch
 * document that set it (in the patch file, or gatesync.yaml for an inline patch) and naming the
 * environment — the base resource file is right, and the same in every other environment.
 */
import type { Diagnostic } from "../../errors.js";
import { patchedAt, positionOf } from "../../load/patches.js";
import type { PatchDocument } from "../../load/patches.js";

/** `findings` of one document of `file`, `written` as the file says, with `patches` (those merged into it, in order) applied. */
export function locatedInPatches(findings: readonly Diagnostic[], patches: readonly PatchDocument[], file: string, written: unknown): Diagnostic[] {
  if (patches.length === 0) return [...findings];
  return findings.map((d) => {
    if (d.file !== file || d.path === undefined) return d;
    // the last patch to set it decides what the document holds there
    for (const p of [...patches].reverse()) {
      const at = patchedAt(p.body, d.path, written);
      if (at === undefined) continue;
      const position = positionOf(p.place.positions, at, d.path);
      return {
        ...d,
        file: p.place.file,
        ...(position === undefined ? { line: undefined, column: undefined } : { line: position[0], column: position[1] }),
        message: `environment ${p.place.environment}: ${d.message}`,
      };
    }
    return d;
  });
}
