/**
 * Directory of YAML → validated resources, or the complete, located list of what is wrong.
 *
 * Stages: list files → read and parse each (syntax, size, encoding, aliases, depth) →
 * classify documents → per resource: envelope, kind schema, kind rules, OpenAPI body,
 * secret references → across resources: duplicate names, references, duplicate identities.
 * Nothing stops at the first problem; every stage reports all it finds.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import PQueue from "p-queue";
import { closest } from "fastest-levenshtein";
import { ErrorCode, compareDiagnostics } from "../errors.js";
import type { Diagnostic, Severity } from "../errors.js";
import type { KindModule, KindName, RuleContext, Spec } from "../kinds/kind.js";
import { kindNames } from "../kinds/kind.js";
import { isKindName, kindModule } from "../kinds/registry.js";
import type { Resource, ResourceSource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import { findSecretRefs, formatRef, refSyntaxProblem, walkStrings } from "../load/secret-refs.js";
import type { SecretRef, SecretSource } from "../load/secret-refs.js";
import { Locator, decodeText, defaultReadLimits, parseYaml } from "../load/yaml-reader.js";
import type { ParsedDocument, PathSegment } from "../load/yaml-reader.js";
import { minScrubLength } from "../secrets/redactor.js";
import { isInside, listResourceFiles, toPosix } from "../source/directory.js";
import { OpenApiChecker } from "./openapi.js";
import type { SchemaIssue } from "./schema-registry.js";
import { SchemaRegistry, formatPath, similar } from "./schema-registry.js";

export interface Limits {
  readonly maxFileBytes: number;
  readonly maxFiles: number;
  readonly maxDepth: number;
  readonly maxAliasCount: number;
}

export const defaultLimits: Limits = {
  maxFileBytes: 5 * 1024 * 1024,
  maxFiles: 50_000,
  maxDepth: defaultReadLimits.maxDepth,
  maxAliasCount: defaultReadLimits.maxAliasCount,
};

export interface ValidateOptions {
  /** Directory holding the resources. */
  readonly root: string;
  /** Nothing outside it is read (the repository root); defaults to `root`. */
  readonly boundary?: string;
  readonly limits?: Partial<Limits>;
  /** Providers that register applications by type (from gatesync.yaml), when known. */
  readonly appTypeProviders?: ReadonlySet<number>;
  /** Where `${env:}`/`${file:}` references are looked up, and how a missing one counts. */
  readonly secrets?: { readonly source: SecretSource; readonly missing: Severity };
}

export interface RepositoryResult {
  /** Resources that passed their own checks, in file order. */
  readonly resources: Resource[];
  /** Every finding, sorted by file and position. */
  readonly diagnostics: Diagnostic[];
  readonly files: number;
  /** Files read and parsed in this run, and files reused unchanged from an earlier run. */
  readonly stats: { readonly filesRead: number; readonly filesReused: number };
}

interface FileRecord {
  readonly path: string;
  readonly absolute: string;
  readonly documents: readonly ParsedDocument[];
}

interface Candidate {
  readonly file: FileRecord;
  readonly doc: ParsedDocument;
  readonly kind: KindModule;
  readonly value: Record<string, unknown>;
}

/** A parsed file kept between runs, valid while its size and modification time are unchanged. */
interface CachedFile {
  readonly size: number;
  readonly mtimeMs: number;
  readonly record: FileRecord;
  readonly text: string;
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * What runs may share: the compiled schemas and OpenAPI validator, the parsed files (an
 * unchanged file is not read again: the daemon's runs after a one-file change re-read one
 * file), and schema results keyed by the parsed values they were computed for.
 */
export interface ValidationCache {
  readonly files: Map<string, CachedFile>;
  readonly schemaIssues: WeakMap<object, Map<string, SchemaIssue[]>>;
  /** An ApiDefinition's spec with its definition file read in, kept while both are unchanged. */
  readonly mergedSpecs: WeakMap<object, { readonly definition: unknown; readonly spec: Spec }>;
  /** The secret references in a parsed value, with their paths. */
  readonly secretRefs: WeakMap<object, ReadonlyArray<{ readonly path: readonly PathSegment[]; readonly ref: SecretRef }>>;
}

/** Reusable across runs: the compiled schemas and the OpenAPI validator are built once. */
export class RepositoryValidator {
  private readonly schemas = new SchemaRegistry();
  private readonly openapi = new OpenApiChecker();
  private readonly cache: ValidationCache = { files: new Map(), schemaIssues: new WeakMap(), mergedSpecs: new WeakMap(), secretRefs: new WeakMap() };

  async validate(opts: ValidateOptions): Promise<RepositoryResult> {
    return new Run(this.schemas, this.openapi, opts, this.cache).execute();
  }
}

class Run {
  private readonly limits: Limits;
  private readonly diagnostics: Diagnostic[] = [];
  private readonly texts = new Map<string, string>();
  private readonly locator = new Locator(this.texts);
  private readonly records = new Map<string, FileRecord>();
  /** Checks of a definition file, done once however many ApiDefinitions name it. */
  private readonly definitionChecks = new Map<string, Promise<{ schema: SchemaIssue[]; errors: SchemaIssue[]; warnings: SchemaIssue[] }>>();
  /** Every `Kind/name` written in the repository, valid or not: references resolve against these. */
  private readonly declared = new Set<string>();
  private root = "";
  private boundary = "";
  private filesRead = 0;
  private filesReused = 0;

  constructor(
    private readonly schemas: SchemaRegistry,
    private readonly openapi: OpenApiChecker,
    private readonly opts: ValidateOptions,
    private readonly cache: ValidationCache,
  ) {
    this.limits = { ...defaultLimits, ...opts.limits };
  }

  /** Schema issues of a parsed value, computed once per value object. */
  private validateSchema(schema: string, value: unknown): SchemaIssue[] {
    if (value === null || typeof value !== "object") return this.schemas.validate(schema, value);
    let bySchema = this.cache.schemaIssues.get(value);
    if (bySchema === undefined) this.cache.schemaIssues.set(value, (bySchema = new Map<string, SchemaIssue[]>()));
    let issues = bySchema.get(schema);
    if (issues === undefined) bySchema.set(schema, (issues = this.schemas.validate(schema, value)));
    return issues;
  }

  async execute(): Promise<RepositoryResult> {
    const listed = await listResourceFiles({ root: this.opts.root, ...(this.opts.boundary === undefined ? {} : { boundary: this.opts.boundary }), maxFiles: this.limits.maxFiles });
    this.root = listed.root;
    this.boundary = listed.boundary;
    this.diagnostics.push(...listed.diagnostics);

    const queue = new PQueue({ concurrency: 32 });
    const seen = new Set(listed.files.map((f) => f.absolute));
    for (const key of this.cache.files.keys()) if (!seen.has(key)) this.cache.files.delete(key);
    const records = await queue.addAll(listed.files.map((f) => () => this.readCached(f.path, f.absolute, f.size, f.mtimeMs)));
    for (const r of records) if (r !== undefined) this.records.set(r.path, r);

    const definitionFiles = await this.definitionFiles();
    const candidates = this.classify(definitionFiles);
    const resources: Resource[] = [];
    for (const c of candidates) {
      const resource = await this.checkResource(c, definitionFiles);
      if (resource !== undefined) resources.push(resource);
    }
    const valid = this.crossChecks(resources);
    return { resources: valid, diagnostics: this.diagnostics.sort(compareDiagnostics), files: listed.files.length, stats: { filesRead: this.filesRead, filesReused: this.filesReused } };
  }

  /** A file as parsed before, when it has not changed since; else read and parsed now. */
  private async readCached(rel: string, absolute: string, size: number, mtimeMs: number): Promise<FileRecord | undefined> {
    const hit = this.cache.files.get(absolute);
    if (hit !== undefined && hit.size === size && hit.mtimeMs === mtimeMs && hit.record.path === rel) {
      this.texts.set(rel, hit.text);
      this.diagnostics.push(...hit.diagnostics);
      this.filesReused++;
      return hit.record;
    }
    const before = this.diagnostics.length;
    this.filesRead++;
    const record = await this.readFile(rel, absolute, size);
    const text = this.texts.get(rel);
    if (record !== undefined && text !== undefined) this.cache.files.set(absolute, { size, mtimeMs, record, text, diagnostics: this.diagnostics.slice(before) });
    else this.cache.files.delete(absolute);
    return record;
  }

  private async readFile(rel: string, absolute: string, size: number): Promise<FileRecord | undefined> {
    if (size > this.limits.maxFileBytes) {
      this.error(ErrorCode.FILE_TOO_LARGE, { file: rel }, `file is ${size} bytes, over the limit of ${this.limits.maxFileBytes}`, "split it into smaller files, or raise limits.maxFileBytes in gatesync.yaml");
      return undefined;
    }
    let bytes: Buffer;
    try {
      bytes = await readFile(absolute);
    } catch (err) {
      this.error(ErrorCode.FILE_READ, { file: rel }, `file cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, "check its permissions");
      return undefined;
    }
    const decoded = decodeText(bytes, rel);
    if ("diagnostic" in decoded) {
      this.diagnostics.push(decoded.diagnostic);
      return undefined;
    }
    this.texts.set(rel, decoded.text);
    const parsed = parseYaml(decoded.text, rel, this.limits);
    this.diagnostics.push(...parsed.diagnostics);
    return { path: rel, absolute, documents: parsed.documents };
  }

  private readonly realpaths = new Map<string, Promise<string>>();

  /** realpath, once per path in a run (a thousand ApiDefinitions may share five files). */
  private realpathOnce(p: string): Promise<string> {
    let r = this.realpaths.get(p);
    if (r === undefined) this.realpaths.set(p, (r = realpath(p)));
    return r;
  }

  /** Files named by some ApiDefinition's definitionFile: their documents are not resources. */
  private async definitionFiles(): Promise<Map<string, string>> {
    // key: "resourceFile\0definitionFile" as written; value: path relative to root
    const result = new Map<string, string>();
    for (const record of this.records.values()) {
      for (const doc of record.documents) {
        const v = doc.value as Record<string, unknown> | null;
        const spec = v?.kind === "ApiDefinition" ? (v.spec as Record<string, unknown> | undefined) : undefined;
        const ref = spec?.definitionFile;
        if (typeof ref !== "string" || ref === "") continue;
        const key = `${record.path}\0${ref}`;
        if (result.has(key)) continue;
        const target = path.resolve(path.dirname(record.absolute), ref);
        const meta = v?.metadata as Record<string, unknown> | undefined;
        // located only when reported
        const at = (): Omit<Diagnostic, "severity" | "code" | "message"> => ({
          file: record.path,
          resource: typeof meta?.name === "string" ? `ApiDefinition/${meta.name}` : undefined,
          path: "spec.definitionFile",
          ...this.at(record.path, doc.index, ["spec", "definitionFile"]),
        });
        if (!isInside(target, this.boundary)) {
          this.error(ErrorCode.PATH_ESCAPE, at(), `definitionFile \`${ref}\` points outside the repository`, "keep OpenAPI documents inside the repository and refer to them with a relative path");
          continue;
        }
        let real: string;
        try {
          real = await this.realpathOnce(target);
        } catch {
          this.error(ErrorCode.DEFINITION_FILE, at(), `definitionFile \`${ref}\` does not exist`, `the path is relative to ${record.path}`);
          continue;
        }
        if (!isInside(real, this.boundary)) {
          this.error(ErrorCode.PATH_ESCAPE, at(), `definitionFile \`${ref}\` leads outside the repository through a symbolic link`, "keep OpenAPI documents inside the repository");
          continue;
        }
        const rel = toPosix(path.relative(this.root, real));
        if (!this.records.has(rel)) {
          const st = await stat(real);
          const loaded = await this.readCached(rel, real, st.size, st.mtimeMs);
          if (loaded === undefined) continue;
          this.records.set(rel, loaded);
        }
        result.set(key, rel);
      }
    }
    return result;
  }

  private classify(definitionFiles: Map<string, string>): Candidate[] {
    const usedAsDefinition = new Set(definitionFiles.values());
    const candidates: Candidate[] = [];
    for (const record of [...this.records.values()].sort((a, b) => (a.path < b.path ? -1 : 1))) {
      if (usedAsDefinition.has(record.path)) continue;
      for (const doc of record.documents) {
        const at = { file: record.path, line: doc.line, column: 1 };
        const v = doc.value;
        if (v === null || typeof v !== "object" || Array.isArray(v)) {
          this.error(ErrorCode.NOT_A_RESOURCE, at, "document is not a mapping, so not a resource", "a resource has apiVersion, kind, metadata and spec");
          continue;
        }
        const value = v as Record<string, unknown>;
        if (!("kind" in value) && !("apiVersion" in value)) {
          if ("openapi" in value || "swagger" in value) {
            this.diagnostics.push({ severity: "warning", code: ErrorCode.NOT_A_RESOURCE, ...at, message: "OpenAPI document that no ApiDefinition names in definitionFile: ignored", hint: "refer to it from an ApiDefinition's spec.definitionFile, or move it out of the resource directory" });
          } else {
            this.error(ErrorCode.NOT_A_RESOURCE, at, "document has no `kind` and no `apiVersion`: not a gatesync resource", `start it with apiVersion: gatesync.dev/v1 and kind: one of ${kindNames.join(", ")}`);
          }
          continue;
        }
        if (!isKindName(value.kind)) {
          const kindAt = { file: record.path, ...this.at(record.path, doc.index, ["kind"]) };
          const guess = typeof value.kind === "string" ? closest(value.kind, [...kindNames]) : undefined;
          this.error(
            ErrorCode.UNKNOWN_KIND,
            kindAt,
            value.kind === undefined ? "missing required field `kind`" : `unknown kind ${JSON.stringify(value.kind)}`,
            `kind must be one of: ${kindNames.join(", ")}${guess !== undefined && typeof value.kind === "string" && similar(value.kind, guess) ? ` (did you mean \`${guess}\`?)` : ""}`,
          );
          continue;
        }
        const name = (value.metadata as Record<string, unknown> | undefined)?.name;
        if (typeof name === "string") this.declared.add(`${value.kind}/${name}`);
        candidates.push({ file: record, doc, kind: kindModule(value.kind), value });
      }
    }
    return candidates;
  }

  private async checkResource(c: Candidate, definitionFiles: Map<string, string>): Promise<Resource | undefined> {
    const { file, doc, kind, value } = c;
    const meta = value.metadata as Record<string, unknown> | undefined;
    const name = typeof meta?.name === "string" ? meta.name : undefined;
    const resource = name === undefined ? undefined : `${kind.kind}/${name}`;
    let errors = this.report(this.validateSchema(kind.schemaFile, value), file.path, doc.index, resource);
    const spec = (value.spec ?? {}) as Spec;
    if (errors > 0 || name === undefined) return undefined;

    const ctx: RuleContext = { appTypeProviders: this.opts.appTypeProviders };
    for (const f of kind.check(spec, ctx)) {
      const at = { file: file.path, resource, path: formatPath(f.path), ...this.at(file.path, doc.index, f.path, f.key === true) };
      const severity = f.severity ?? "error";
      this.diagnostics.push({ severity, code: f.code ?? ErrorCode.RULE_VIOLATION, ...at, message: f.message, ...(f.hint === undefined ? {} : { hint: f.hint }) });
      if (severity === "error") errors++;
    }
    errors += this.checkSecrets(spec, file.path, doc.index, resource);

    let finalSpec: Spec = spec;
    let definitionSource: ResourceSource | undefined;
    if (kind.kind === "ApiDefinition") {
      const def = await this.checkDefinition(c, spec, resource, definitionFiles);
      if (def === undefined) return undefined;
      finalSpec = def.spec;
      definitionSource = def.source;
    }
    if (errors > 0) return undefined;
    return {
      apiVersion: String(value.apiVersion),
      kind: kind.kind,
      name,
      labels: (meta?.labels ?? {}) as Record<string, string>,
      annotations: (meta?.annotations ?? {}) as Record<string, string>,
      spec: finalSpec,
      source: { file: file.path, index: doc.index, line: doc.line },
      ...(definitionSource === undefined ? {} : { definitionSource }),
    };
  }

  /** Reads definitionFile (when given) and checks the OpenAPI document. */
  private async checkDefinition(
    c: Candidate,
    spec: Spec,
    resource: string | undefined,
    definitionFiles: Map<string, string>,
  ): Promise<{ spec: Spec; source?: ResourceSource } | undefined> {
    let document: unknown = spec.definition;
    let where: { file: string; index: number; base: PathSegment[] } = { file: c.file.path, index: c.doc.index, base: ["spec", "definition"] };
    let source: ResourceSource | undefined;
    if (typeof spec.definitionFile === "string") {
      const rel = definitionFiles.get(`${c.file.path}\0${spec.definitionFile}`);
      const record = rel === undefined ? undefined : this.records.get(rel);
      if (rel === undefined || record === undefined) return undefined; // already reported
      if (record.documents.length !== 1) {
        const at = { file: c.file.path, resource, path: "spec.definitionFile", ...this.at(c.file.path, c.doc.index, ["spec", "definitionFile"]) };
        if (record.documents.length === 0 && !this.diagnostics.some((d) => d.file === rel && d.severity === "error")) {
          this.error(ErrorCode.DEFINITION_FILE, at, `definitionFile \`${spec.definitionFile}\` holds no document`, "put one OpenAPI document in it");
        } else if (record.documents.length > 1) {
          this.error(ErrorCode.DEFINITION_FILE, at, `definitionFile \`${spec.definitionFile}\` holds ${record.documents.length} documents`, "put exactly one OpenAPI document in it");
        }
        return undefined;
      }
      const first = record.documents[0]!;
      document = first.value;
      where = { file: rel, index: first.index, base: [] };
      source = { file: rel, index: first.index, line: first.line };
    }
    const checks = await this.checkOpenApi(document, source === undefined ? undefined : where.file);
    let errors = this.report(checks.schema, where.file, where.index, resource, where.base);
    if (errors === 0) {
      errors += this.report(checks.errors, where.file, where.index, resource, where.base, ErrorCode.OPENAPI_INVALID, "the document breaks the OpenAPI schema");
      this.report(checks.warnings, where.file, where.index, resource, where.base, ErrorCode.OPENAPI_UNCHECKED_REF, undefined, "warning");
    }
    const ext = (document as Record<string, unknown> | null)?.["x-gw-api-gateway"] as Record<string, unknown> | undefined;
    const extId = (ext?.info as Record<string, unknown> | undefined)?.id;
    if (typeof extId === "string" && extId !== spec.apiId) {
      const p: PathSegment[] = [...where.base, "x-gw-api-gateway", "info", "id"];
      this.error(ErrorCode.RULE_VIOLATION, { file: where.file, resource, path: formatPath(p), ...this.at(where.file, where.index, p) }, `x-gw-api-gateway.info.id ${JSON.stringify(extId)} differs from spec.apiId ${JSON.stringify(spec.apiId)}`, "the gateway refuses a definition whose id does not match the API it patches: make them equal, or drop info.id");
      errors++;
    }
    if (source !== undefined) errors += this.checkSecrets(document, where.file, where.index, resource, []);
    if (errors > 0) return undefined;
    // the same object while spec and definition are: what is built from it can be remembered
    let merged = this.cache.mergedSpecs.get(spec);
    if (merged === undefined || merged.definition !== document) {
      merged = { definition: document, spec: { ...spec, definition: document } };
      this.cache.mergedSpecs.set(spec, merged);
    }
    return { spec: merged.spec, ...(source === undefined ? {} : { source }) };
  }

  /** The schema and OpenAPI checks of a document; those of a definition file are made once per run. */
  private checkOpenApi(document: unknown, definitionFile: string | undefined): Promise<{ schema: SchemaIssue[]; errors: SchemaIssue[]; warnings: SchemaIssue[] }> {
    const run = async (): Promise<{ schema: SchemaIssue[]; errors: SchemaIssue[]; warnings: SchemaIssue[] }> => {
      const schema = this.validateSchema("api-definition.schema.json#/$defs/oas", document);
      if (schema.length > 0) return { schema, errors: [], warnings: [] };
      return { schema, ...(await this.openapi.check(document)) };
    };
    if (definitionFile === undefined) return run();
    let cached = this.definitionChecks.get(definitionFile);
    if (cached === undefined) this.definitionChecks.set(definitionFile, (cached = run()));
    return cached;
  }

  /** The secret references in a value, found once per parsed value. */
  private secretRefsIn(value: unknown): ReadonlyArray<{ readonly path: readonly PathSegment[]; readonly ref: SecretRef }> {
    const key = value !== null && typeof value === "object" ? value : undefined;
    const known = key === undefined ? undefined : this.cache.secretRefs.get(key);
    if (known !== undefined) return known;
    const found: Array<{ path: readonly PathSegment[]; ref: SecretRef }> = [];
    walkStrings(value, (s, p) => {
      for (const ref of findSecretRefs(s)) found.push({ path: p, ref });
    });
    if (key !== undefined) this.cache.secretRefs.set(key, found);
    return found;
  }

  private checkSecrets(value: unknown, file: string, index: number, resource: string | undefined, base: PathSegment[] = ["spec"]): number {
    let errors = 0;
    for (const { path: p, ref } of this.secretRefsIn(value)) {
      const fieldPath = [...base, ...p];
      // positions are looked up only for findings: locating parses the file again
      const at = (): Omit<Diagnostic, "severity" | "code" | "message"> => ({ file, resource, path: formatPath(fieldPath), ...this.at(file, index, fieldPath) });
      const syntax = refSyntaxProblem(ref);
      if (syntax !== undefined) {
        this.error(ErrorCode.SECRET_SYNTAX, at(), syntax, "write ${env:NAME} or ${file:PATH}; `$${` gives a literal `${`");
        errors++;
        continue;
      }
      const secrets = this.opts.secrets;
      if (secrets === undefined) continue;
      const found = secrets.source.lookup(ref);
      if (found.ok) {
        if (found.value.length > 0 && found.value.length < minScrubLength) {
          this.diagnostics.push({ severity: "warning", code: ErrorCode.SECRET_TOO_SHORT, ...at(), message: `the value of ${formatRef(ref)} is shorter than ${minScrubLength} characters: it cannot be scrubbed from server answers and logs`, hint: "use a longer secret" });
        }
        continue;
      }
      if (found.reason === "scope") {
        this.error(ErrorCode.SECRET_SCOPE, at(), found.message, found.allow);
        errors++;
      } else if (found.reason === "escape") {
        this.error(ErrorCode.PATH_ESCAPE, at(), found.message, "secret files must live inside secrets.fileRoot");
        errors++;
      } else {
        this.diagnostics.push({ severity: secrets.missing, code: ErrorCode.SECRET_UNRESOLVED, ...at(), message: `${formatRef(ref)} cannot be resolved: ${found.message}`, hint: "it must be resolvable where gatesync plans and applies" });
        if (secrets.missing === "error") errors++;
      }
    }
    return errors;
  }

  /** Duplicate names, references and identities; returns the resources without such errors. */
  private crossChecks(resources: Resource[]): Resource[] {
    const bad = new Set<Resource>();
    const byKind = new Map<KindName, Map<string, Resource>>();
    for (const r of resources) {
      let names = byKind.get(r.kind);
      if (names === undefined) byKind.set(r.kind, (names = new Map<string, Resource>()));
      const first = names.get(r.name);
      if (first !== undefined) {
        this.error(ErrorCode.DUPLICATE_NAME, { ...this.resourceAt(r, ["metadata", "name"]) }, `${resourceId(r)} is defined twice; first at ${first.source.file}:${first.source.line}`, "names are unique per kind: rename one of them");
        bad.add(r);
      } else {
        names.set(r.name, r);
      }
    }
    const apis = byKind.get("ApiDefinition") ?? new Map<string, Resource>();
    const apiIdOf = (name: string): string | undefined => {
      const api = apis.get(name);
      return api === undefined ? undefined : String(api.spec.apiId);
    };
    for (const r of resources) {
      for (const ref of kindModule(r.kind).references(r.spec)) {
        // A target that is declared but invalid has its own error; do not cascade.
        if (this.declared.has(`${ref.kind}/${ref.name}`)) continue;
        const targets = byKind.get(ref.kind);
        const known = [...(targets?.keys() ?? [])];
        const guess = known.length > 0 ? closest(ref.name, known) : undefined;
        this.error(
          ErrorCode.UNRESOLVED_REFERENCE,
          this.resourceAt(r, ref.path),
          `${ref.kind} \`${ref.name}\` does not exist in this repository`,
          guess === undefined ? `define ${ref.kind}/${ref.name}, or give the raw id instead of a reference` : `did you mean \`${guess}\`? (known: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", ..." : ""})`,
        );
        bad.add(r);
      }
    }
    const identities = new Map<string, Resource>();
    for (const r of resources) {
      if (bad.has(r)) continue;
      const id = kindModule(r.kind).identity(r.spec, apiIdOf);
      if (id === undefined) continue;
      const first = identities.get(id);
      if (first === undefined) {
        identities.set(id, r);
        continue;
      }
      this.error(ErrorCode.DUPLICATE_IDENTITY, this.resourceAt(r, ["spec"]), `${resourceId(r)} and ${resourceId(first)} (${first.source.file}:${first.source.line}) address the same server object (${id})`, "each server object may be managed by one resource: remove or merge one of them");
      bad.add(r);
    }
    return resources.filter((r) => !bad.has(r));
  }

  private resourceAt(r: Resource, p: readonly PathSegment[]): { file: string; resource: string; path: string; line?: number; column?: number } {
    return { file: r.source.file, resource: resourceId(r), path: formatPath(p), ...this.at(r.source.file, r.source.index, p) };
  }

  private report(
    issues: readonly SchemaIssue[],
    file: string,
    index: number,
    resource: string | undefined,
    base: readonly PathSegment[] = [],
    code: ErrorCode = ErrorCode.SCHEMA_VIOLATION,
    prefix?: string,
    severity: Severity = "error",
  ): number {
    for (const issue of issues) {
      const full = [...base, ...issue.path];
      this.diagnostics.push({
        severity,
        code,
        file,
        ...(resource === undefined ? {} : { resource }),
        ...(full.length === 0 ? {} : { path: formatPath(full) }),
        ...this.at(file, index, full, issue.key),
        message: prefix === undefined || full.length > 0 ? issue.message : `${prefix}: ${issue.message}`,
        ...(issue.hint === undefined ? {} : { hint: issue.hint }),
      });
    }
    return severity === "error" ? issues.length : 0;
  }

  private at(file: string, index: number, p: readonly PathSegment[], key = false): { line?: number; column?: number } {
    const pos = this.locator.locate(file, index, p, { key });
    return pos === undefined ? {} : pos;
  }

  private error(code: ErrorCode, at: Omit<Diagnostic, "severity" | "code" | "message">, message: string, hint?: string): void {
    const clean = Object.fromEntries(Object.entries(at).filter(([, v]) => v !== undefined));
    this.diagnostics.push({ severity: "error", code, ...clean, message, ...(hint === undefined ? {} : { hint }) });
  }
}
