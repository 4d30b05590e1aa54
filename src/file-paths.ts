/** Path helpers shared by the stages that read files: containment and display form. */
import path from "node:path";

/** Whether `child` is `parent` or lies below it (lexically: resolve links first where they matter). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** A relative path with `/` separators, as files are named in findings and the state. */
export function toPosix(p: string): string {
  return p.split(path.sep).join("/");
}

/** `file` (relative to the resource directory) below `prefix` (the resource directory in the repository), with `/` separators. */
export function repositoryPath(prefix: string, file: string): string {
  return path.posix.normalize(
    [prefix, file]
      .filter((x) => x !== "" && x !== ".")
      .join("/")
      .split(path.sep)
      .join("/"),
  );
}
