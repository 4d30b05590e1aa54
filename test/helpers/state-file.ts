import { readFile } from "node:fs/promises";

/** Every byte of a SQLite state as text: the database and its WAL (what a secret scan must cover). */
export async function rawStateText(file: string): Promise<string> {
  const parts = await Promise.all([file, `${file}-wal`].map((f) => readFile(f, "latin1").catch(() => "")));
  return parts.join("");
}
