import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

const created: string[] = [];

/** Writes files (path → content) into a fresh temporary directory and returns it. */
export async function tempRepo(files: Record<string, string | Uint8Array> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-test-"));
  created.push(dir);
  for (const [rel, content] of Object.entries(files)) {
    const full = path.join(dir, rel);
    await mkdir(path.dirname(full), { recursive: true });
    await writeFile(full, content);
  }
  return dir;
}

export async function removeTempRepos(): Promise<void> {
  for (const dir of created.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** 1-based line and column of the first occurrence of `token` in `text`. */
export function positionOf(text: string, token: string, occurrence = 1): { line: number; column: number } {
  let index = -1;
  for (let i = 0; i < occurrence; i++) {
    index = text.indexOf(token, index + 1);
    if (index < 0) throw new Error(`token ${token} not found`);
  }
  const before = text.slice(0, index).split("\n");
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

/** Root of this repository (for examples/ and schemas/). */
export const projectRoot = path.resolve(import.meta.dirname, "..", "..");
/** The shared reference material carried inside the repository (test/fixtures/shared/README.md). */
export const sharedRoot = path.join(projectRoot, "test", "fixtures", "shared");
