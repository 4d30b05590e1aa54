/**
 * `mkdir -p` that always ends. Node's own `mkdir(dir, { recursive: true })` never returns for a
 * path where the kernel answers ENOENT to an existing parent (anything below /proc, for one):
 * a mistyped state path or `--out` would hang the process at full CPU. This walks up once.
 */
import { statSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";

export async function ensureDirectory(dir: string): Promise<void> {
  const target = path.resolve(dir);
  // the common case, a directory that is there, in one synchronous call: the failed mkdir and the stat cost two thread-pool round trips
  if (isDirectory(target)) return;
  try {
    await mkdir(target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      if ((await stat(target)).isDirectory()) return;
      throw notADirectory(target);
    }
    const parent = path.dirname(target);
    if (code !== "ENOENT" || parent === target) throw err;
    await ensureDirectory(parent);
    // the parent exists now: a second failure is final
    await mkdir(target).catch(async (again: NodeJS.ErrnoException) => {
      if (again.code !== "EEXIST") throw again;
      if (!(await stat(target)).isDirectory()) throw notADirectory(target);
    });
  }
}

function notADirectory(target: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOTDIR: ${target} is a file, not a directory`), { code: "ENOTDIR", path: target });
}

function isDirectory(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}
