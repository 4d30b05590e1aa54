/**
 * One file, as far as it can be taken alone: read and parse it (load), classify each document,
 * and run the checks that need only that document. The unit of work of the worker pool: what
 * it returns is plain data (structured-cloneable), and the same whether run in a worker or not.
 */
import type { Diagnostic } from "../../errors.js";
import { literalSecrets } from "../repository/secret-warnings.js";
import { printableJson, summarise } from "../../kinds/document-ref.js";
import type { DocumentSummary } from "../../kinds/document-ref.js";
import type { KindName } from "../../kinds/kind.js";
import { jsonTextOf } from "../../kinds/json-text.js";
import { classifyDocument } from "../../load/classify.js";
import type { DocumentClass } from "../../load/classify.js";
import type { FileToRead, Limits } from "../../load/read-file.js";
import { readResourceFile, textDigest } from "../../load/read-file.js";
import { checkAttachment, checkResourceDocument, secretRefsIn } from "../document/check-document.js";
import type { AttachmentVerdict, Checkers, SecretRefAt } from "../document/check-document.js";
import { holdsEscape } from "../../secrets/references.js";
import { locateWith } from "../findings.js";
import { createHash } from "node:crypto";
import { RulesetCheck } from "../../rules/rule-thread.js";
import type { RulesetsCode } from "../../rules/rule-runner.js";
import type { DocumentRulesets } from "../document/check-document.js";
import type { ValuesContext } from "../../load/values.js";
import { applyValues } from "../environment/value-check.js";
import { applyPatches, targetOf } from "../../load/patches.js";
import { locatedInPatches } from "../environment/patch-findings.js";
import type { PatchDocument } from "../../load/patches.js";
import { FileFindings } from "../../rules/findings-cache.js";

/** What checks of a file depend on besides the file. */
export interface FileCheckContext {
  readonly limits: Limits;
  /** Providers that register applications by type (sorted), when known. */
  readonly appTypeProviders: readonly number[] | undefined;
  /**
   * Resource documents of kinds without an attached document come back as JSON text (`text`)
   * instead of `value`: what a one-shot command holds of 100,000 resources (see json-text.ts).
   */
  readonly compact?: boolean;
  /** Governance rulesets (docs/user/rules.md), bundled: each thread evaluates them once. */
  readonly rules?: RulesetsCode;
  /** The environment's `${var:}` values (docs/user/environments.md), put in before any check. */
  readonly values?: ValuesContext;
  /** The environment's overlay patches (load/patches.ts), applied after the values. */
  readonly patches?: readonly PatchDocument[];
  /** Attached documents held by reference keep their JSON text too (DocumentSummary.json): the run prints them. */
  readonly documentJson?: boolean;
}

/**
 * The rulesets of a file's documents on this thread; undefined without rules (Spectral is then
 * never loaded). With the file's text and a cache directory, the file's entry in the findings
 * cache too: its documents are linted only if the entry does not hold them.
 */
export function rulesetsFor(
  rules: RulesetsCode | undefined,
  file: { readonly path: string; readonly absolute: string },
  text: string | undefined,
): DocumentRulesets | undefined {
  if (rules === undefined || (rules.openapi === undefined && rules.resources === undefined)) return undefined;
  const memo =
    text === undefined || rules.cacheDir === undefined
      ? undefined
      : new FileFindings(rules.cacheDir, {
          rulesets: [rules.openapi?.hash ?? "", rules.resources?.hash ?? ""],
          file: file.path,
          absolute: file.absolute,
          text,
        });
  return {
    ...(rules.openapi === undefined ? {} : { openapi: new RulesetCheck(rules.openapi, rules.budget) }),
    ...(rules.resources === undefined ? {} : { resources: new RulesetCheck(rules.resources, rules.budget) }),
    absolute: file.absolute,
    ...(text === undefined ? {} : { contentKey: createHash("sha1").update(text).digest("base64") }),
    ...(memo === undefined ? {} : { memo }),
  };
}

export interface DocumentVerdict {
  readonly index: number;
  readonly line: number;
  /** The parsed document; undefined when `text` holds it. */
  readonly value: unknown;
  /** A compact check's resource document as JSON text: the document without its spec, and the spec. */
  readonly text?: DocumentText;
  /** Set for a resource of a known kind. */
  readonly kind?: KindName;
  readonly name?: string;
  /** Findings about the document as a resource (or why it is none). */
  readonly findings: readonly Diagnostic[];
  /** A resource whose schema passed and that has a name. */
  readonly passed: boolean;
  readonly ruleErrors: number;
  readonly secretRefs: readonly SecretRefAt[];
  /** Checks of the document as an attachment (when it looks like one), or of a resource's inline one. */
  readonly attachment?: AttachmentVerdict;
  /** An attachment that passed its checks and holds no secret reference: `value` is dropped for this. */
  readonly summary?: DocumentSummary;
}

export interface DocumentText {
  readonly head: string;
  readonly spec: string;
}

const isMapping = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A mapping whose spec is a mapping, both plain JSON, as text (head and spec); else undefined. */
function asText(value: unknown): DocumentText | undefined {
  if (!isMapping(value) || !isMapping(value.spec)) return undefined;
  const { spec, ...head } = value;
  const specText = jsonTextOf(spec);
  const headText = specText === undefined ? undefined : jsonTextOf(head);
  return specText === undefined || headText === undefined ? undefined : { head: headText, spec: specText };
}

export interface FileVerdict {
  readonly path: string;
  readonly absolute: string;
  /** Reading and parsing. */
  readonly diagnostics: readonly Diagnostic[];
  readonly documents: readonly DocumentVerdict[];
  /** The `${var:}` names the file references (with values in the context only). */
  readonly valuesUsed?: readonly string[];
  /** `Kind/name` of the resources an overlay patch of the context named. */
  readonly patchesApplied?: readonly string[];
  /** The file's entry in the findings cache (its name), which the run keeps when it prunes the cache. */
  readonly rulesEntry?: string;
  /** The line of the file's SOPS document: a SOPS file among the resource files (secret-warnings.ts). */
  readonly sopsLine?: number;
  /** The digest of the file's bytes (load/read-file.ts contentDigest), when they were read. */
  readonly digest?: string;
  /** `Kind/name` of each document as patches see it (load/patches.ts targetOf): a patch naming one changes the verdict. */
  readonly targets?: readonly string[];
}

/** Whether a file's text can hold `$${` once parsed: written out, or made by an escape (`\u0024` in a quoted string). */
const mayHoldEscape = (text: string | undefined): boolean => text === undefined || text.includes("$${") || text.includes("\\");

/** What the checks of one document of a file need: the file's checkers, locator and rulesets, and where the document is. */
interface DocumentAt {
  readonly checkers: Checkers;
  readonly locate: ReturnType<typeof locateWith>;
  readonly rulesets: DocumentRulesets | undefined;
  readonly compact: boolean;
  readonly documentJson: boolean;
  readonly appTypeProviders: readonly number[] | undefined;
  readonly base: Pick<DocumentVerdict, "index" | "line" | "value" | "passed" | "ruleErrors">;
  readonly place: { readonly file: string; readonly index: number };
}

/**
 * A document in the shape of one a kind carries (an OpenAPI document in a file of its own). A
 * valid one without secret references is held by reference from here on: its summary (members'
 * digests and small members) replaces the parsed tree — unless a value changed it (it is not what
 * its file says) or it holds `$${` that the secret stage writes as `${`, as it does in an inline one.
 */
async function attachmentVerdict(
  cls: Extract<DocumentClass, { role: "attachment" }>,
  value: unknown,
  at: DocumentAt,
  file: { readonly text: string | undefined; readonly changed: boolean },
): Promise<DocumentVerdict> {
  const attachment = await checkAttachment(cls.of, value, at.place, at.checkers, at.locate, at.rulesets);
  const secretRefs = secretRefsIn(value, []);
  const byReference = attachment.errors === 0 && secretRefs.length === 0 && !file.changed && !(mayHoldEscape(file.text) && holdsEscape(value));
  // the file's text as checked (no value put in, no patch applied, not a file held in memory — no file to read it again from — else not held by reference)
  const text = !byReference || file.text === undefined ? undefined : textDigest(file.text);
  const json = byReference && at.documentJson ? printableJson(value, file.text?.length ?? 0) : undefined;
  const held = byReference ? { value: undefined, summary: summarise(value as Record<string, unknown>, cls.of.heldMembers, text, json) } : {};
  return { ...at.base, ...held, findings: [cls.warning], secretRefs, attachment };
}

/** A resource document checked; `shown` makes its findings as they are reported (patches, missing values). */
async function resourceVerdict(
  cls: Extract<DocumentClass, { role: "resource" }>,
  value: unknown,
  at: DocumentAt,
  shown: (findings: readonly Diagnostic[]) => Diagnostic[],
): Promise<DocumentVerdict> {
  const resource = cls.name === undefined ? undefined : `${cls.kind.kind}/${cls.name}`;
  const rules = { appTypeProviders: at.appTypeProviders === undefined ? undefined : new Set(at.appTypeProviders) };
  const verdict = await checkResourceDocument(cls.kind, cls.value, cls.name, { ...at.place, resource }, rules, at.checkers, at.locate, at.rulesets);
  const text = at.compact && cls.kind.attached === undefined ? asText(value) : undefined;
  return {
    ...at.base,
    ...(text === undefined ? {} : { value: undefined, text }),
    kind: cls.kind.kind,
    ...(cls.name === undefined ? {} : { name: cls.name }),
    ...verdict,
    findings: shown([...verdict.findings, ...literalSecrets((cls.value as { spec?: unknown }).spec, { ...at.place, resource }, at.locate)]),
  };
}

/** The file read, the rulesets that apply to it, and how to locate a path in it. */
async function readForChecks(file: FileToRead, ctx: FileCheckContext, syncRead: boolean) {
  // the rules' findings are kept by content: an environment's values and patches are part of it
  const environmentPart = (ctx.values === undefined ? "" : JSON.stringify(ctx.values)) + (ctx.patches === undefined ? "" : JSON.stringify(ctx.patches));
  let rulesets: DocumentRulesets | undefined;
  // with rulesets nearly every OpenAPI document has findings: the trees the reader made locate
  // them (held while this file is checked), instead of a second parse of the file — unless the
  // findings cache holds the file's findings, positions and all (then the value-only parse serves)
  const read = await readResourceFile(file, ctx.limits, syncRead, (text) => {
    rulesets = rulesetsFor(ctx.rules, file, text + environmentPart);
    return rulesets !== undefined && rulesets.memo?.found !== true;
  });
  rulesets ??= rulesetsFor(ctx.rules, file, undefined);
  const locate = locateWith(
    read.text === undefined ? new Map<string, string>() : new Map([[file.path, read.text]]),
    read.trees === undefined ? undefined : new Map([[file.path, read.trees]]),
  );
  return { read, rulesets, locate };
}

/** `syncRead`: on a worker thread, whose only work this is. */
export async function checkFile(file: FileToRead, ctx: FileCheckContext, checkers: Checkers, syncRead = false): Promise<FileVerdict> {
  const { read, rulesets, locate } = await readForChecks(file, ctx, syncRead);
  const at = { checkers, locate, rulesets, compact: ctx.compact === true, documentJson: ctx.documentJson === true, appTypeProviders: ctx.appTypeProviders };
  const valued = ctx.values === undefined ? undefined : applyValues(read.documents, ctx.values, file.path, (f, i, p) => locate(f, i, p), read.text);
  const documents: DocumentVerdict[] = [];
  const applied = new Set<string>();
  let sopsLine: number | undefined;
  const changed = new Set(valued?.changed);
  // where a value is missing, what the checks say of the reference left in its place is noise
  const unvalued = new Set((valued?.findings ?? []).map((d) => `${d.line}:${d.column}`));
  const besideMissing = (d: Diagnostic): boolean => d.code !== "VALUE_MISSING" && d.line !== undefined && unvalued.has(`${d.line}:${d.column}`);
  const targets = new Set<string>();
  for (const written of valued?.documents ?? read.documents) {
    const target = targetOf(written.value);
    if (target !== undefined) targets.add(target);
    const patched = ctx.patches === undefined ? written.value : applyPatches(written.value, ctx.patches, applied);
    // left out of this environment by a `$patch: delete`
    if (patched === undefined) continue;
    if (patched !== written.value) changed.add(written.index);
    const doc = patched === written.value ? written : { ...written, value: patched };
    const base = { index: doc.index, line: doc.line, value: doc.value, passed: false, ruleErrors: 0 };
    const place = { file: file.path, index: doc.index };
    const cls = classifyDocument(file.path, doc, (p) => locate(file.path, doc.index, p));
    // a SOPS file among the resource files: only `${sops:}` reads it
    if (cls.role === "sops") {
      sopsLine ??= doc.line;
      continue;
    }
    if (cls.role === "invalid") {
      documents.push({ ...base, findings: [cls.diagnostic], secretRefs: [] });
    } else if (cls.role === "attachment") {
      documents.push(
        await attachmentVerdict(cls, doc.value, { ...at, base, place }, { text: read.text, changed: changed.has(doc.index) || file.held !== undefined }),
      );
    } else {
      // what the checks say beside a missing value's reference is noise; findings about what a patch set are the patch's
      const merged = patched === written.value ? [] : (ctx.patches ?? []).filter((p) => !p.delete && p.target === targetOf(written.value));
      const shown = (findings: readonly Diagnostic[]): Diagnostic[] =>
        locatedInPatches(unvalued.size === 0 ? findings : findings.filter((d) => !besideMissing(d)), merged, file.path, written.value);
      documents.push(await resourceVerdict(cls, doc.value, { ...at, base, place }, shown));
    }
  }
  const patchesApplied = applied.size === 0 ? {} : { patchesApplied: [...applied].sort() };
  rulesets?.memo?.save();
  const rulesEntry = rulesets?.memo === undefined ? {} : { rulesEntry: rulesets.memo.entry };
  return {
    path: file.path,
    absolute: file.absolute,
    diagnostics: valued === undefined ? read.diagnostics : [...read.diagnostics, ...valued.findings],
    documents,
    ...(valued === undefined ? {} : { valuesUsed: valued.used }),
    ...patchesApplied,
    ...rulesEntry,
    ...(sopsLine === undefined ? {} : { sopsLine }),
    ...(read.digest === undefined ? {} : { digest: read.digest }),
    ...(targets.size === 0 ? {} : { targets: [...targets] }),
  };
}
