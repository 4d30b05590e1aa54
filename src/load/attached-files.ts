/**
 * Files that resources name for their attached documents (ApiDefinition's definitionFile):
 * resolved relative to the naming resource's file, kept inside the repository (also through
 * symbolic links), each resolved once however many resources name it.
 */
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { closest } from "fastest-levenshtein";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { isInside, toPosix } from "../file-paths.js";
import type { AttachedDocument } from "../kinds/kind.js";
import type { PathSegment } from "../text/field-path.js";
import { formatPath } from "../text/field-path.js";
import { similar } from "../text/similar.js";
import type { SourceFile } from "./list-files.js";

/** A resource that names a file: where it is written, and how its findings are located. */
export interface FileReference {
  readonly file: string;
  readonly absolute: string;
  readonly index: number;
  readonly resource: string | undefined;
  readonly attached: AttachedDocument;
  /** The name as written. */
  readonly ref: string;
}

export interface ResolvedFiles {
  /** `resourceFile\0name` → the file's path relative to the root. */
  readonly targets: Map<string, string>;
  /** Named files outside the listing (but inside the repository): to be read too. */
  readonly extra: SourceFile[];
  readonly diagnostics: Diagnostic[];
}

/** Where a missing file's path is relative to, with the closest file of the repository when one is near. */
function missingFileHint(from: string, ref: string, listed: ReadonlySet<string>): string {
  const dir = path.posix.dirname(from);
  const options = [...listed].filter((f) => f !== from).map((f) => path.posix.relative(dir, f));
  const guess = options.length === 0 ? undefined : closest(ref, options);
  const near = guess !== undefined && (similar(ref, guess) || similar(path.posix.basename(ref), path.posix.basename(guess)));
  return `${near ? `did you mean \`${guess}\`? ` : ""}the path is relative to ${from}`;
}

export const referenceKey = (file: string, ref: string): string => `${file}\0${ref}`;

type Locate = (file: string, index: number, path: readonly PathSegment[]) => { line?: number; column?: number };

export async function resolveAttachedFiles(
  references: readonly FileReference[],
  where: { readonly root: string; readonly boundary: string; readonly listed: ReadonlySet<string>; readonly held?: boolean },
  locate: Locate,
): Promise<ResolvedFiles> {
  const result: ResolvedFiles = { targets: new Map(), extra: [], diagnostics: [] };
  const realpaths = new Map<string, Promise<string>>();
  const extra = new Set<string>();
  for (const r of references) {
    const key = referenceKey(r.file, r.ref);
    if (result.targets.has(key)) continue;
    // located only when reported
    const fail = (code: ErrorCode, message: string, hint: string): void => {
      const at = {
        file: r.file,
        ...(r.resource === undefined ? {} : { resource: r.resource }),
        path: formatPath(r.attached.fileField),
        ...locate(r.file, r.index, r.attached.fileField),
      };
      result.diagnostics.push({ severity: "error", code, ...at, message, hint });
    };
    const target = path.resolve(path.dirname(r.absolute), r.ref);
    const field = formatPath(r.attached.fileField.slice(1));
    if (!isInside(target, where.boundary)) {
      fail(
        ErrorCode.PATH_ESCAPE,
        `${field} \`${r.ref}\` points outside the repository`,
        "keep OpenAPI documents inside the repository and refer to them with a relative path",
      );
      continue;
    }
    let real: string;
    try {
      let pending = realpaths.get(target);
      // files held in memory (HeldFile): a named file is one of them, there are no links
      const held = (t: string): Promise<string> =>
        where.listed.has(toPosix(path.relative(where.root, t))) ? Promise.resolve(t) : Promise.reject(new Error("not held"));
      if (pending === undefined) realpaths.set(target, (pending = where.held === true ? held(target) : realpath(target)));
      real = await pending;
    } catch {
      fail(ErrorCode.DEFINITION_FILE, `${field} \`${r.ref}\` does not exist`, missingFileHint(r.file, r.ref, where.listed));
      continue;
    }
    if (!isInside(real, where.boundary)) {
      fail(ErrorCode.PATH_ESCAPE, `${field} \`${r.ref}\` leads outside the repository through a symbolic link`, "keep OpenAPI documents inside the repository");
      continue;
    }
    const rel = toPosix(path.relative(where.root, real));
    if (!where.listed.has(rel) && !extra.has(rel)) {
      extra.add(rel);
      const st = await stat(real);
      result.extra.push({ path: rel, absolute: real, size: st.size, mtimeMs: st.mtimeMs });
    }
    result.targets.set(key, rel);
  }
  return result;
}
