/**
 * One validation of a repository: directory of YAML → validated resources, or the complete,
 * located list of what is wrong.
 *
 * Stages: list files (load) → per file, on worker threads when there are many: read, parse,
 * classify, check each document's schema and kind rules and attached OpenAPI document
 * (check-file) → files that resources name for their attached documents → per resource:
 * secret references, the attached document → across resources (cross-checks).
 * Nothing stops at the first problem; every stage reports all it finds.
 */
import { HeldValue, JsonText } from "../../deferred.js";
import { compareDiagnostics, ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import { kindModule } from "../../kinds/registry.js";
import type { Spec } from "../../kinds/kind.js";
import type { Resource, ResourceSource } from "../../kinds/resource.js";
import { resolveAttachedFiles } from "../../load/attached-files.js";
import type { FileReference } from "../../load/attached-files.js";
import { listResourceFiles } from "../../load/list-files.js";
import type { SourceFile } from "../../load/list-files.js";
import { defaultLimits, readTextSync } from "../../load/read-file.js";
import type { Limits } from "../../load/read-file.js";
import { attachDocument } from "../file/attachments.js";
import type { AttachmentContext } from "../file/attachments.js";
import type { SecretRefAt } from "../document/check-document.js";
import type { FileCheckContext, FileVerdict } from "../file/check-file.js";
import { crossCheck } from "./cross-checks.js";
import { checkBatchRoute } from "../document/batch-route-check.js";
import type { ReservedBatchRoute } from "../../kinds/kind.js";
import { writtenOf } from "./written-resources.js";
import type { DocumentAt } from "./written-resources.js";
import type { LocalFileChecker } from "../file/file-pool.js";
import { errorCount, locateWith } from "../findings.js";
import type { Locate } from "../findings.js";
import { secretDiagnostics, unresolvedSummary } from "../document/secret-check.js";
import { sopsFileWarnings, strayedSopsFiles } from "./secret-warnings.js";
import type { SecretsSaid } from "../document/secret-check.js";
import type { SecretSettings } from "../document/secret-check.js";
import { rulesetsCode } from "../../rules/prepare-rules.js";
import { pruneFindingsCache } from "../../rules/findings-cache.js";
import type { PreparedRules } from "../../rules/prepare-rules.js";
import type { RulesetsCode } from "../../rules/rule-runner.js";
import type { ValuesContext } from "../../load/values.js";
import type { PatchOrigin } from "../../load/patches.js";
import { loadPatches, unmatchedPatches } from "../environment/patch-load.js";
import { unusedValues } from "../environment/value-check.js";
import type { ConfigFile } from "../environment/patch-load.js";
import path from "node:path";
import { toPosix } from "../../file-paths.js";
import { heldListing } from "./held-files.js";
import type { HeldFiles } from "./held-files.js";

export interface ValidateOptions {
  /** Directory holding the resources. */
  readonly root: string;
  /** Nothing outside it is read (the repository root); defaults to `root`. */
  readonly boundary?: string;
  /**
   * Where `root` lies in its repository (`config`): a message naming another file names it from
   * there, as the finding's own file is named once the caller has placed it (inRepository).
   */
  readonly repositoryPrefix?: string;
  readonly limits?: Partial<Limits>;
  /** Providers that register applications by type (from gatesync.yaml), when known. */
  readonly appTypeProviders?: ReadonlySet<number>;
  /** Where `${env:}`/`${file:}` references are looked up, and how a missing one counts. */
  readonly secrets?: SecretSettings;
  /** The batch route gatesync.yaml reserves for the operator: resources addressing it are refused (BATCH_ROUTE_RESERVED). */
  readonly batchRoute?: ReservedBatchRoute;
  /** Governance rulesets (prepareRules): their findings are diagnostics like every other. */
  readonly rules?: PreparedRules;
  /** An environment's `${var:}` values (docs/user/environments.md); without them references are left as written. */
  readonly values?: ValuesContext;
  /** Where the values are written (gatesync.yaml), for the warning about a value nothing uses. */
  readonly valuesFile?: string;
  /** An environment's overlay patches, in order (load/patches.ts). */
  readonly patches?: readonly PatchOrigin[];
  /**
   * The run prints the attached documents (a JSON plan): while the repository's files weigh at
   * most `printedDocumentsBudget`, each document's JSON text is kept from its validation.
   */
  readonly printsDocuments?: boolean;
  /** The files held in memory, by path below `root`: nothing is listed or read from disk (held-files.ts). */
  readonly held?: HeldFiles;
}

/**
 * The most file bytes whose documents' JSON is kept for printing (indented, up to three times as
 * many bytes of text; 1.4 times on the realistic repository):
 * a realistic 10,000-resource repository (18 MB) keeps them, a 100,000-resource one reads each
 * document again as it is printed, within its memory bound.
 */
export const printedDocumentsBudget = 64 * 1024 * 1024;

export interface RepositoryResult {
  /** Resources that passed their own checks, in file order. */
  readonly resources: Resource[];
  /** Every finding, sorted by file and position. */
  readonly diagnostics: Diagnostic[];
  readonly files: number;
  /** Files read and parsed in this run, and files reused unchanged from an earlier run. */
  readonly stats: { readonly filesRead: number; readonly filesReused: number };
}

/** What a run asks of the validator that holds it (RepositoryValidator): kept verdicts, the pool, merged specs. */
export interface RunHost {
  verdicts(files: readonly SourceFile[], ctx: FileCheckContext): Promise<{ verdicts: FileVerdict[]; read: number }>;
  listing(found: number): void;
  checked(present: ReadonlySet<string>): Promise<void>;
  readonly reusing: boolean;
  readonly checkers: LocalFileChecker;
  mergedSpec(spec: Spec, document: unknown, attach: (spec: Spec, document: unknown) => Spec): Spec;
}

const noEntries: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Labels or annotations, one object per distinct set (frozen, shared by the resources that
 * carry it: a repository has few — `team: payments` on thousands of resources); none (absent
 * or empty) are one shared empty object.
 */
function shared(entries: unknown, seen: Map<string, Readonly<Record<string, string>>>): Readonly<Record<string, string>> {
  if (entries === undefined || entries === null || Object.keys(entries).length === 0) return noEntries;
  const key = JSON.stringify(entries);
  let one = seen.get(key);
  if (one === undefined) {
    one = Object.freeze({ ...(entries as Record<string, string>) });
    seen.set(key, one);
  }
  return one;
}

/** One validation of a repository: its findings and resources, and what it keeps while it runs. */
export class ValidationRun {
  private readonly diagnostics: Diagnostic[] = [];
  private readonly records = new Map<string, FileVerdict>();
  private readonly apiVersions = new Map<string, string>();
  private readonly entrySets = new Map<string, Readonly<Record<string, string>>>();
  private readonly locate: Locate;
  private readonly secretsSaid: SecretsSaid = { short: new Set(), unresolved: new Set() };
  private filesRead = 0;
  private filesReused = 0;

  constructor(
    private readonly opts: ValidateOptions,
    private readonly validator: RunHost,
  ) {
    this.locate = locateWith((file) => {
      const record = this.records.get(file);
      return record === undefined ? undefined : (this.opts.held?.get(file)?.text ?? readTextSync(record.absolute, file));
    });
  }

  async execute(): Promise<RepositoryResult> {
    const limits = { ...defaultLimits, ...this.opts.limits };
    const listed =
      this.opts.held !== undefined
        ? heldListing(this.opts.root, this.opts.boundary, this.opts.held)
        : await listResourceFiles({
            root: this.opts.root,
            ...(this.opts.boundary === undefined ? {} : { boundary: this.opts.boundary }),
            maxFiles: limits.maxFiles,
            onProgress: (found) => this.validator.listing(found),
          });
    this.diagnostics.push(...listed.diagnostics);
    const providers = this.opts.appTypeProviders;
    const rules = rulesetsCode(this.opts.rules);
    if (this.opts.rules?.cacheWarning !== undefined) this.diagnostics.push(this.opts.rules.cacheWarning);
    if (this.opts.rules?.notes !== undefined) this.diagnostics.push(...this.opts.rules.notes);
    const config = this.configFile(listed.root);
    const patches =
      this.opts.patches === undefined || this.opts.patches.length === 0
        ? undefined
        : await loadPatches(this.opts.patches, listed.root, limits, this.opts.values ?? { environment: "default", values: {} }, config);
    this.diagnostics.push(...(patches?.diagnostics ?? []));
    const ctx: FileCheckContext = {
      limits,
      appTypeProviders: providers === undefined ? undefined : [...providers].sort((a, b) => a - b),
      ...(this.validator.reusing ? {} : { compact: true }),
      ...(rules === undefined ? {} : { rules }),
      ...(this.opts.values === undefined ? {} : { values: this.opts.values }),
      ...(patches === undefined ? {} : { patches: patches.patches }),
      ...(this.opts.printsDocuments === true && listed.files.reduce((n, f) => n + f.size, 0) <= printedDocumentsBudget ? { documentJson: true } : {}),
    };
    await this.check(listed.files, ctx);
    if (patches !== undefined) this.diagnostics.push(...unmatchedPatches(patches, this.records.values()));
    this.checkDocumentCount(limits.maxDocuments);

    const resolved = await resolveAttachedFiles(
      this.fileReferences(),
      { root: listed.root, boundary: listed.boundary, listed: new Set(this.records.keys()), held: this.opts.held !== undefined },
      this.locate,
    );
    this.diagnostics.push(...resolved.diagnostics);
    await this.check(resolved.extra, ctx);
    await this.validator.checked(new Set(this.records.keys()));
    if (rules?.cacheDir !== undefined) pruneFindingsCache(rules.cacheDir, new Set([...this.records.values()].flatMap((r) => r.rulesEntry ?? [])));

    const resources = await this.resourcesOf(resolved.targets, rules, config);
    return {
      resources,
      diagnostics: this.diagnostics.sort(compareDiagnostics),
      files: listed.files.length,
      stats: { filesRead: this.filesRead, filesReused: this.filesReused },
    };
  }

  /** More resource documents than `maxDocuments` in the whole repository: an error (each file's were counted as it was read). */
  private checkDocumentCount(maxDocuments: number): void {
    const documents = [...this.records.values()].reduce((n, r) => n + r.documents.length, 0);
    if (documents <= maxDocuments) return;
    this.diagnostics.push({
      severity: "error",
      code: ErrorCode.TOO_MANY_DOCUMENTS,
      message: `the repository holds ${documents} resource documents, over the limit of ${maxDocuments}`,
      hint: "raise limits.maxDocuments in gatesync.yaml if this many resources are meant",
    });
  }

  /** The resources the checked files make, cross-checked and held to the batch route, with the run's last findings. */
  private async resourcesOf(targets: AttachmentContext["targets"], rules: RulesetsCode | undefined, config: ConfigFile | undefined): Promise<Resource[]> {
    const { candidates, named } = this.classify(new Set(targets.values()));
    const attachments: AttachmentContext = {
      records: this.records,
      targets,
      checkers: () => this.validator.checkers.checkers(),
      locate: this.locate,
      report: (d) => this.diagnostics.push(...d),
      checkSecrets: (refs, place) => this.checkSecrets(refs, place),
      reportedFiles: new Set(),
      ...(rules === undefined ? {} : { rules }),
    };
    // every reference named first: a source reads them together (a run's SOPS files' keys at once, awaited here)
    await this.opts.secrets?.source.prefetch?.(candidates.flatMap((c) => c.doc.secretRefs.map((r) => r.ref)));
    const made: Array<Resource | undefined> = [];
    for (const c of candidates) made.push(await this.finish(c, attachments));
    const resources = made.filter((r): r is Resource => r !== undefined);
    const crossed = crossCheck(resources, writtenOf(named, candidates, made), this.locate, this.opts.repositoryPrefix ?? "");
    const routed = checkBatchRoute(crossed.valid, this.opts.batchRoute, this.locate);
    this.diagnostics.push(
      ...crossed.diagnostics,
      ...routed.diagnostics,
      ...unusedValues(this.opts.values, config?.path, this.records.values()),
      ...unresolvedSummary(this.secretsSaid.unresolved),
      ...sopsFileWarnings(this.opts.secrets?.source, this.opts.root, this.opts.repositoryPrefix ?? ""),
      ...strayedSopsFiles(this.records.values(), this.opts.secrets?.source, this.opts.root, this.opts.repositoryPrefix ?? ""),
    );
    return routed.valid;
  }

  /** gatesync.yaml (valuesFile), named as findings name files: relative to the resource root. */
  private configFile(root: string): ConfigFile | undefined {
    const file = this.opts.valuesFile;
    return file === undefined ? undefined : { absolute: file, path: toPosix(path.relative(root, file)) };
  }

  private async check(files: readonly SourceFile[], ctx: FileCheckContext): Promise<void> {
    if (files.length === 0) return;
    const { verdicts, read } = await this.validator.verdicts(files, ctx);
    this.filesRead += read;
    this.filesReused += files.length - read;
    for (const v of verdicts) {
      this.records.set(v.path, v);
      this.diagnostics.push(...v.diagnostics);
    }
  }

  /** Every resource that names a file for its attached document. */
  private fileReferences(): FileReference[] {
    const refs: FileReference[] = [];
    for (const record of this.records.values()) {
      for (const doc of record.documents) {
        const attached = doc.kind === undefined ? undefined : kindModule(doc.kind).attached;
        const spec = (doc.value as { spec?: unknown } | undefined)?.spec;
        const ref = attached === undefined || spec === null || typeof spec !== "object" ? undefined : attached.file(spec as Spec);
        if (attached === undefined || ref === undefined) continue;
        refs.push({
          file: record.path,
          absolute: record.absolute,
          index: doc.index,
          resource: doc.name === undefined ? undefined : `${doc.kind}/${doc.name}`,
          attached,
          ref,
        });
      }
    }
    return refs;
  }

  /**
   * The documents that may become resources, and those that name one (valid or not, for the
   * cross-checks), in file order; files named for attached documents hold neither.
   */
  private classify(attachedFiles: ReadonlySet<string>): { candidates: DocumentAt[]; named: DocumentAt[] } {
    const candidates: DocumentAt[] = [];
    const named: DocumentAt[] = [];
    for (const file of [...this.records.values()].sort((a, b) => (a.path < b.path ? -1 : 1))) {
      if (attachedFiles.has(file.path)) continue;
      for (const doc of file.documents) {
        this.diagnostics.push(...doc.findings);
        if (doc.kind !== undefined && doc.name !== undefined) named.push({ file, doc });
        if (doc.passed) candidates.push({ file, doc });
      }
    }
    return { candidates, named };
  }

  private async finish({ file, doc }: DocumentAt, attachments: AttachmentContext): Promise<Resource | undefined> {
    const kind = kindModule(doc.kind!);
    const value = (doc.text === undefined ? doc.value : JSON.parse(doc.text.head)) as Record<string, unknown>;
    const meta = value.metadata as Record<string, unknown> | undefined;
    const name = doc.name!;
    const resource = `${kind.kind}/${name}`;
    const errors = doc.ruleErrors + this.checkSecrets(doc.secretRefs, { file: file.path, index: doc.index, resource });
    let finalSpec = (value.spec ?? {}) as Spec;
    let attachedSource: ResourceSource | undefined;
    const attached = kind.attached;
    if (attached !== undefined) {
      const spec = finalSpec;
      const found = await attachDocument(attached, { file, doc, spec, resource }, attachments);
      if (found === undefined) return undefined;
      finalSpec = this.validator.mergedSpec(spec, found.document, (s, d) => attached.attach(s, d));
      attachedSource = found.source;
    }
    if (errors > 0) return undefined;
    const apiVersion = String(value.apiVersion);
    const fields = {
      // one string for the few versions there are, not a copy per resource
      apiVersion: this.apiVersions.get(apiVersion) ?? (this.apiVersions.set(apiVersion, apiVersion), apiVersion),
      kind: kind.kind,
      name,
      labels: shared(meta?.labels, this.entrySets),
      annotations: shared(meta?.annotations, this.entrySets),
      source: { file: file.path, index: doc.index, line: doc.line },
      ...(attachedSource === undefined ? {} : { definitionSource: attachedSource }),
    };
    // a compact check's spec stays the text it came as: parsed on each read
    return { ...fields, spec: doc.text === undefined ? new HeldValue(finalSpec) : new JsonText<Spec>(doc.text.spec) };
  }

  private checkSecrets(refs: readonly SecretRefAt[], place: { file: string; index: number; resource: string | undefined }): number {
    if (refs.length === 0) return 0;
    const found = secretDiagnostics(refs, place, this.opts.secrets, this.locate, this.secretsSaid);
    this.diagnostics.push(...found);
    return errorCount(found);
  }
}
