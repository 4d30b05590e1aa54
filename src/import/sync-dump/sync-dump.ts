/**
 * The sync tool's dump directory: its index and the files it lists, or — the index lost — the
 * files found by their names (`oas-<id>.json`, `api-<id>.json`, `policy-<id>.json`).
 */
import { readdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { InputProblem, readSourceFile } from "../bounded-input.js";
import type { InputLimits } from "../bounded-input.js";
import type { ReportEntry, SourceRead } from "../model.js";
import { errorEntry, skipEntry } from "../model.js";
import { indexNames, readIndex } from "./index-file.js";
import type { DumpIndex, IndexedFile } from "./index-file.js";
import { dumpFileRead } from "./dump-file.js";

const source = "sync-dump";

/** The index of the dump, or one made of the files' names when it is lost. */
async function indexOf(root: string, limits: InputLimits): Promise<{ index: DumpIndex; indexName?: string; entries: ReportEntry[] }> {
  const name = indexNames.find((n) => existsSync(path.join(root, n)));
  if (name !== undefined) {
    const docs = readSourceFile(root, name, limits);
    const index = readIndex(docs[0]?.value, limits.maxFiles);
    const entries = index.problems.map((p) => errorEntry({ file: name, at: p.at }, source, p.message));
    return { index, indexName: name, entries };
  }
  const names = (await readdir(root)).filter((n) => n.endsWith(".json")).sort();
  if (names.length > limits.maxFiles) throw new InputProblem(`the dump holds ${names.length} files, more than the ${limits.maxFiles} an import reads`);
  const files: IndexedFile[] = names.filter((n) => /^(oas|api)-.+\.json$/.test(n)).map((file) => ({ file, overrides: {}, at: "" }));
  const policies = names.filter((n) => /^policy-.+\.json$/.test(n)).map((file) => ({ file, at: "" }));
  const note = skipEntry(
    { file: "." },
    source,
    `no index (${indexNames.join(" or ")}): the files were found by their names`,
    "the index's overrides and ids are not known: check the imported APIs' listen paths and upstreams",
  );
  return { index: { files, policies, assets: [], problems: [] }, entries: [note] };
}

/** Everything a dump directory holds, as resources and report entries. */
export async function readSyncDump(root: string, limits: InputLimits): Promise<SourceRead> {
  const { index, indexName, entries } = await indexOf(root, limits);
  const read: SourceRead = { resources: [], entries: [...entries] };
  const perFile = index.files.map((f): SourceRead => {
    const origin = { file: f.file };
    try {
      const docs = readSourceFile(root, f.file, limits);
      return dumpFileRead(docs[0]?.value, f, origin);
    } catch (err) {
      if (!(err instanceof InputProblem)) throw err;
      const at = indexName === undefined ? origin : { file: indexName, at: f.at };
      return { resources: [], entries: [errorEntry(at, source, `${f.file}: ${err.message}`, err.hint)] };
    }
  });
  for (const one of perFile) {
    read.resources.push(...one.resources);
    read.entries.push(...one.entries);
  }
  for (const p of index.policies) {
    read.entries.push(
      skipEntry(
        { file: p.file },
        source,
        "a security policy: outside gatesync's kinds",
        "keep managing policies in the dashboard; OAuth clients and keys name them by id",
      ),
    );
  }
  for (const a of index.assets) {
    read.entries.push(skipEntry({ file: a.file }, source, "an asset (template or other): outside gatesync's kinds"));
  }
  return read;
}
