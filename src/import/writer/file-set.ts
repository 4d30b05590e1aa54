/**
 * Every file an import writes, as text, before anything is written: the resource files and
 * documents, the secrets as references (`.env.example`, or a SOPS file per environment), and in
 * a new repository gatesync.yaml and .gitignore as `gatesync init` writes them.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { gitignoreTemplate } from "../../init/init.js";
import { sopsFileText } from "../../secrets/sops/sops-writer.js";
import type { ImportedResource } from "../model.js";
import { envExample, envNaming, extractSecrets, sopsNaming } from "../secret-values.js";
import { keptSopsFile } from "./kept-sops.js";
import type { HeldFile } from "../../load/read-file.js";
import { configText, documentName, documentText, resourceDocument, resourceDocumentLine, resourcePath, resourceText } from "./render.js";

export interface SecretsOut {
  /** age recipients; none: `${env:}` references. */
  readonly recipients: readonly string[];
  /** The environment whose SOPS file holds the values (`secrets/<environment>/imported.enc.yaml`). */
  readonly environment: string;
  /** Where the age identities are looked up (`--merge`: an unchanged SOPS file is kept, kept-sops.ts). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface RepositoryFiles {
  readonly files: Map<string, string>;
  /** The files below `config/` (paths relative to it) with the documents their texts were made from: what import validates. */
  readonly held: Map<string, HeldFile>;
  readonly resources: ImportedResource[];
  readonly secretsOf: Map<ImportedResource, string[]>;
  readonly secretNames: string[];
  /** What the report says about the files besides the resources (a SOPS file written again, and why). */
  readonly notes: string[];
}

/** The lines of an existing `.env.example` that name a variable (merged with the new names). */
async function namesIn(file: string): Promise<string[]> {
  if (!existsSync(file)) return [];
  return (await readFile(file, "utf8")).split("\n").flatMap((l) => /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(l)?.[1] ?? []);
}

export async function repositoryFiles(resources: readonly ImportedResource[], out: SecretsOut, mergeInto: string | undefined): Promise<RepositoryFiles> {
  const sopsFile = `${out.environment}/imported.enc.yaml`;
  const encrypt = out.recipients.length > 0;
  const extracted = extractSecrets(resources, encrypt ? sopsNaming(sopsFile) : envNaming);
  const files = new Map<string, string>();
  const held = new Map<string, HeldFile>();
  const add = (rel: string, text: string, value: unknown, line: number): void => {
    files.set(rel, text);
    held.set(rel.slice("config/".length), { text, documents: [{ index: 0, value, line }] });
  };
  for (const r of extracted.resources) {
    const doc = resourceDocument(r);
    add(resourcePath(r), resourceText(r, doc), doc, resourceDocumentLine);
    if (r.document !== undefined) add(path.posix.join(path.posix.dirname(resourcePath(r)), documentName(r.name)), documentText(r.document), r.document, 1);
  }
  const names = extracted.secrets.map((s) => s.name).sort();
  const notes: string[] = [];
  if (encrypt && names.length > 0) {
    const values = Object.fromEntries(extracted.secrets.map((s) => [s.name, s.value]));
    const existing = mergeInto === undefined ? undefined : await keptSopsFile(path.join(mergeInto, "secrets", sopsFile), values, out.recipients, out.env ?? {});
    if (existing?.kept === false && existing.why !== undefined) notes.push(`secrets/${sopsFile} written again: ${existing.why}`);
    files.set(`secrets/${sopsFile}`, existing?.kept === true ? existing.text : await sopsFileText(values, out.recipients));
  }
  if (!encrypt) {
    const kept = mergeInto === undefined ? [] : await namesIn(path.join(mergeInto, ".env.example"));
    if (names.length > 0 || kept.length > 0) files.set(".env.example", envExample([...kept, ...names]));
  }
  if (mergeInto === undefined) {
    files.set("gatesync.yaml", configText(encrypt ? [] : names));
    files.set(".gitignore", gitignoreTemplate);
    if (!encrypt || names.length === 0) files.set("secrets/.gitkeep", "");
  }
  return { files, held, resources: extracted.resources, secretsOf: extracted.byResource, secretNames: names, notes };
}
