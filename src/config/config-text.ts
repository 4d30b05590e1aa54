/**
 * The text of a settings file checked: read, parsed, held to its schema and to what the schema
 * cannot say (selectors, environments, rulesets), every problem located. config.ts builds the
 * typed config from what passes; the daemon checks a repository's file with it too.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { ConfigError, ErrorCode, ValidationFailed } from "../errors.js";
import type { Diagnostic, GatesyncError } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";
import { parseSelector } from "../label-selector.js";
import { Locator } from "../load/yaml-locator.js";
import { decodeText, parseYaml } from "../load/yaml-reader.js";
import { rulesFromDocument, rulesProblems } from "../rules/rules-config.js";
import type { SchemaRegistry } from "../validate/schema/schema-registry.js";
import { parseDuration } from "./duration.js";
import { environmentProblems } from "./environment-section.js";
import { trackProblems } from "./track-section.js";
import { leaseProblems } from "./lease-section.js";
import { poolProblems } from "./pool-section.js";

type Raw = Record<string, unknown>;

/** The bytes of a settings file, or CONFIG_READ located at it. */
export async function readConfigFile(file: string, absolute: string): Promise<Buffer> {
  try {
    return await readFile(absolute);
  } catch (err) {
    throw new ConfigError(ErrorCode.CONFIG_READ, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      hint: "pass the path of gatesync.yaml with --config",
      location: { file },
    });
  }
}

/**
 * A settings file's text checked (schema, selectors, environments, rulesets), every problem
 * located in `file` (the name shown); `complete` fills what the document may leave out before
 * the schema sees it (a repository's file of team settings only). The document is returned,
 * completed, with the line and column of a path in the file.
 */
export function checkConfigText(
  bytes: Buffer,
  file: string,
  absolute: string,
  schemas: SchemaRegistry,
  complete: (doc: Raw) => Raw = (d) => d,
): { readonly document: Raw; readonly locate: (p: readonly PathSegment[]) => { line?: number; column?: number } } {
  const decoded = decodeText(bytes, file);
  if ("diagnostic" in decoded) throw new ValidationFailed([decoded.diagnostic]);
  const parsed = parseYaml(decoded.text, file);
  const diagnostics: Diagnostic[] = [...parsed.diagnostics];
  const doc = parsed.documents[0];
  if (diagnostics.length === 0 && (parsed.documents.length !== 1 || doc === undefined || typeof doc.value !== "object" || doc.value === null)) {
    diagnostics.push({
      severity: "error",
      code: ErrorCode.CONFIG_INVALID,
      file,
      message: "gatesync.yaml must hold exactly one mapping",
      hint: "see examples/gatesync.yaml",
    });
  }
  if (diagnostics.length > 0 || doc === undefined) throw new ValidationFailed(diagnostics);
  const value = complete(doc.value as Raw);
  const locator = new Locator(new Map([[file, decoded.text]]));
  const locate = (p: readonly PathSegment[]): { line?: number; column?: number } => locator.locate(file, doc.index, p) ?? {};
  for (const issue of schemas.validate("gatesync-config.schema.json", value)) {
    diagnostics.push({
      severity: "error",
      code: ErrorCode.CONFIG_INVALID,
      file,
      path: formatPath(issue.path),
      ...locator.locate(file, doc.index, issue.path, { key: issue.key }),
      message: issue.message,
      hint: issue.hint,
    });
  }
  if (diagnostics.length === 0) diagnostics.push(...selectorProblems(value, file));
  const baseDir = path.dirname(absolute);
  if (diagnostics.length === 0)
    diagnostics.push(
      ...environmentProblems(value, baseDir, file, locate),
      ...leaseProblems(value, file, locate),
      ...poolProblems(value, file, locate),
      ...trackProblems(value, file, locate),
    );
  if (diagnostics.length === 0) diagnostics.push(...rulesProblems(rulesFromDocument(value.rules, baseDir, parseDuration), baseDir, file, locate));
  if (diagnostics.length > 0) throw new ValidationFailed(diagnostics);
  return { document: value, locate };
}

function selectorProblems(doc: Raw, file: string): Diagnostic[] {
  if (typeof doc.selector !== "string") return [];
  try {
    parseSelector(doc.selector);
    return [];
  } catch (err) {
    const e = err as GatesyncError;
    return [
      { severity: "error", code: ErrorCode.CONFIG_INVALID, file, path: "selector", message: e.message, ...(e.hint === undefined ? {} : { hint: e.hint }) },
    ];
  }
}
