/**
 * `gatesync import`: a repository gatesync can apply, made of what a team already has, such
 * that the first plan creates nothing. The sources are read as data (bounded-input.ts), their
 * objects become resources with their identities (ids, or adoption annotations), secrets become
 * references, names are made unique in a fixed order, and the files are validated from memory by
 * gatesync's own validator (a resource that fails is dropped and reported), then staged in a
 * temporary directory and moved into place.
 */
import path from "node:path";
import { existsSync } from "node:fs";
import { RepositoryValidator } from "../validate/repository/repository-validator.js";
import { toPosix } from "../file-paths.js";
import type { KindName } from "../kinds/kind.js";
import { InputProblem, defaultInputLimits } from "./bounded-input.js";
import type { InputLimits } from "./bounded-input.js";
import type { ImportedResource, ReportEntry, SourceRead } from "./model.js";
import { errorEntry, skipEntry } from "./model.js";
import { readSyncDump } from "./sync-dump/sync-dump.js";
import { readOperatorManifests } from "./operator/operator.js";
import { readDashboardExport } from "./dashboard-export/dashboard-export.js";
import { readServiceAnswers } from "./service-answers/service-answers.js";
import { uniqueNames, withApiRefs, withoutDuplicates } from "./naming.js";
import { declaredResources } from "./existing-repository.js";
import type { Declared } from "./existing-repository.js";
import { resourcePath } from "./writer/render.js";
import { repositoryFiles } from "./writer/file-set.js";
import type { SecretsOut } from "./writer/file-set.js";
import { moveMerged, moveNew, stageFiles } from "./writer/write-repository.js";
import { sortEntries } from "./report.js";
import type { ImportReport } from "./report.js";

export interface ImportSources {
  readonly syncDumps: readonly string[];
  readonly operatorFiles: readonly string[];
  readonly dashboardExports: readonly string[];
  readonly answerDirs: readonly string[];
  /** The provider of the portal's products (its product answers carry none). */
  readonly productProvider?: number;
}

export interface ImportOptions {
  readonly sources: ImportSources;
  readonly target: string;
  readonly merge: boolean;
  /** age recipients: secrets go to a SOPS file per environment instead of `${env:}`. */
  readonly encryptTo: readonly string[];
  readonly environment: string;
  readonly limits?: InputLimits;
  /** The environment's variables: the age identities that decrypt a SOPS file an earlier import wrote (`--merge`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

type Reader = (given: string) => SourceRead | Promise<SourceRead>;

/** One source read, its origins named as the user gave the source; a source that cannot be read at all, one error. */
async function readOne(given: string, source: string, isDir: boolean, read: Reader): Promise<SourceRead> {
  const name = (file: string): string => (!isDir ? given : file === "." ? given : toPosix(path.join(given, file)));
  try {
    const r = await read(given);
    return {
      resources: r.resources.map((x) => ({ ...x, source, origin: { ...x.origin, file: name(x.origin.file) } })),
      entries: r.entries.map((e) => ({ ...e, origin: { ...e.origin, file: name(e.origin.file) } })),
    };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (err instanceof InputProblem || code === "ENOENT" || code === "ENOTDIR" || code === "EACCES") {
      const message = err instanceof InputProblem ? err.message : `cannot read it (${String(code)})`;
      return { resources: [], entries: [errorEntry({ file: given }, source, message, err instanceof InputProblem ? err.hint : undefined)] };
    }
    throw err;
  }
}

async function readSources(s: ImportSources, limits: InputLimits): Promise<SourceRead> {
  const reads: SourceRead[] = [];
  const abs = (g: string): string => path.resolve(g);
  for (const d of s.syncDumps) reads.push(await readOne(d, "sync-dump", true, (g) => readSyncDump(abs(g), limits)));
  for (const f of s.operatorFiles)
    reads.push(await readOne(f, "operator", false, (g) => readOperatorManifests(path.dirname(abs(g)), [path.basename(g)], limits)));
  for (const f of s.dashboardExports)
    reads.push(await readOne(f, "dashboard-export", false, (g) => readDashboardExport(path.dirname(abs(g)), path.basename(g), limits)));
  for (const d of s.answerDirs) reads.push(await readOne(d, "service-answers", true, (g) => readServiceAnswers(abs(g), limits, s.productProvider)));
  return { resources: reads.flatMap((r) => r.resources), entries: reads.flatMap((r) => r.entries) };
}

const sourceName = (r: ImportedResource): string => r.source ?? "import";

/** `--merge`: objects the repository declares keep their names; ones declared in another file than import writes are left. */
function againstRepository(
  resources: readonly ImportedResource[],
  declared: readonly Declared[],
): { kept: ImportedResource[]; entries: ReportEntry[]; taken: Map<KindName, Set<string>> } {
  const bySource = new Map(declared.filter((d) => d.sourceId !== undefined).map((d) => [`${d.kind}\0${d.sourceId!}`, d]));
  const taken = new Map<KindName, Set<string>>();
  for (const d of declared) taken.set(d.kind, (taken.get(d.kind) ?? new Set()).add(d.name));
  const kept: ImportedResource[] = [];
  const entries: ReportEntry[] = [];
  for (const r of resources) {
    const d = bySource.get(`${r.kind}\0${r.sourceId}`);
    if (d === undefined) kept.push(r);
    else if (d.file === resourcePath(d)) {
      taken.get(d.kind)?.delete(d.name);
      kept.push({ ...r, name: d.name });
    } else entries.push(skipEntry(r.origin, sourceName(r), `${r.sourceId} is already declared as ${d.kind}/${d.name} in ${d.file}: left as it is`));
  }
  return { kept, entries, taken };
}

/**
 * The resources whose files the validator refuses, each with its first finding: the files as
 * import is about to write them, checked from memory (the documents their texts were made from,
 * findings located in the texts) by the validator every command uses, on this thread.
 */
async function refused(files: Awaited<ReturnType<typeof repositoryFiles>>, target: string): Promise<Map<ImportedResource, string>> {
  // nothing to import (every object skipped, or already declared): no resource to check
  if (files.held.size === 0) return new Map();
  const validator = new RepositoryValidator({ workers: { threads: 0 }, reuse: false });
  const result = await validator.validate({ root: path.join(target, "config"), held: files.held });
  const byFile = new Map<string, ImportedResource>();
  for (const r of files.resources) {
    byFile.set(resourcePath(r), r);
    if (r.document !== undefined) byFile.set(resourcePath(r).replace(/\.yaml$/, ".openapi.json"), r);
  }
  const out = new Map<ImportedResource, string>();
  for (const d of result.diagnostics) {
    if (d.severity !== "error" || d.file === undefined) continue;
    const r = byFile.get(`config/${toPosix(d.file)}`);
    if (r !== undefined && !out.has(r)) out.set(r, `${d.code} ${d.file}:${d.line}:${d.column}: ${d.message}`);
  }
  return out;
}

export async function runImport(o: ImportOptions): Promise<ImportReport> {
  const limits = o.limits ?? defaultInputLimits;
  const target = path.resolve(o.target);
  if (o.merge && !existsSync(target))
    throw new InputProblem(`--merge: ${o.target} does not exist`, "give an existing repository, or leave --merge out to make a new one");
  const read = await readSources(o.sources, limits);
  const entries: ReportEntry[] = [...read.entries];
  const unique = withoutDuplicates(read.resources, sourceName);
  entries.push(...unique.entries);
  const merged = o.merge ? againstRepository(unique.kept, await declaredResources(target, limits)) : { kept: unique.kept, entries: [], taken: new Map() };
  entries.push(...merged.entries);
  let resources = withApiRefs(uniqueNames(merged.kept, merged.taken));
  const secretsOut: SecretsOut = { recipients: o.encryptTo, environment: o.environment, ...(o.env === undefined ? {} : { env: o.env }) };
  // a resource the validator refuses is dropped and reported; its references may make others fail: twice at most
  for (let round = 0; ; round++) {
    const files = await repositoryFiles(resources, secretsOut, o.merge ? target : undefined);
    const bad = await refused(files, target);
    if (bad.size === 0 || round === 2) {
      if (bad.size > 0) entries.push(...[...bad].map(([r, why]) => errorEntry(r.origin, sourceName(r), `not valid as ${r.kind}: ${why}`)));
      const temp = await stageFiles(files.files, target);
      const outcome = o.merge ? await moveMerged(temp, target, files.files) : await moveNew(temp, target, files.files);
      return reportOf(o, entries, files, outcome);
    }
    for (const [r, why] of bad)
      entries.push(skipEntry(r.origin, sourceName(r), `not valid as ${r.kind}: ${why}`, "correct it at the source, or write the resource by hand"));
    const dropped = new Set([...bad.keys()].map((r) => `${r.kind}\0${r.sourceId}`));
    resources = resources.filter((r) => !dropped.has(`${r.kind}\0${r.sourceId}`));
  }
}

function reportOf(
  o: ImportOptions,
  entries: ReportEntry[],
  files: Awaited<ReturnType<typeof repositoryFiles>>,
  outcome: { written: string[]; unchanged: string[] },
): ImportReport {
  const imported: ReportEntry[] = files.resources.map((r) => ({
    origin: r.origin,
    source: sourceName(r),
    outcome: "imported",
    as: `${r.kind}/${r.name}`,
    identity: r.annotations === undefined ? "id" : "adopt",
    ...(r.unmanaged.length === 0 ? {} : { unmanaged: r.unmanaged }),
    ...((files.secretsOf.get(r) ?? []).length === 0 ? {} : { secrets: files.secretsOf.get(r) ?? [] }),
  }));
  const all = sortEntries([...imported, ...entries]);
  const count = (k: ReportEntry["outcome"]): number => all.filter((e) => e.outcome === k).length;
  return {
    target: o.target,
    merge: o.merge,
    entries: all,
    written: outcome.written,
    unchanged: outcome.unchanged,
    secretNames: files.secretNames,
    notes: files.notes,
    counts: { imported: count("imported"), skipped: count("skipped"), errors: count("error") },
  };
}
