/**
 * An environment's values put into the documents of one file (load/values.ts), with a located
 * VALUE_MISSING finding for each reference the environment gives no value (docs/user/environments.md).
 */
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import { formatPath } from "../../text/field-path.js";
import type { ParsedDocument } from "../../load/parsed-yaml.js";
import { substituteValues } from "../../load/values.js";
import type { ValuesContext } from "../../load/values.js";
import type { Locate } from "../findings.js";

export interface ValuedDocuments {
  readonly documents: readonly ParsedDocument[];
  /** Indexes of the documents a value changed: they are held by value, never re-read from their file. */
  readonly changed: ReadonlySet<number>;
  readonly findings: readonly Diagnostic[];
  /** Every value name referenced in the file. */
  readonly used: readonly string[];
}

/** `Kind/name` of a document, when it says. */
function resourceOf(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const v = value as { kind?: unknown; metadata?: { name?: unknown } };
  return typeof v.kind === "string" && typeof v.metadata?.name === "string" ? `${v.kind}/${v.metadata.name}` : undefined;
}

/** The hint of a missing value: where to give it. */
export function missingValueHint(ctx: ValuesContext, name: string): string {
  return ctx.environment === "default"
    ? `give it under \`values:\` in gatesync.yaml (\`values: { ${name}: … }\`), or write \`$\${var:${name}}\` for the text itself`
    : `give it under \`environments.${ctx.environment}.values\` (or the top-level \`values:\`) in gatesync.yaml`;
}

/**
 * Whether a file's text can hold a `${var:}` reference once parsed: it is written out, or made
 * by an escape (`\u0024{var:…}` in a double-quoted or JSON string). Plain, single-quoted and
 * block scalars have no escapes, so a text with neither cannot: its documents are not walked
 * (a walk of every string of 10,000 resources is ~0.1 s of CPU, and most files hold no reference).
 */
function mayHoldValueRef(text: string): boolean {
  return text.includes("${var:") || text.includes("\\");
}

/** `text`: the file's text, when it was read (a text that cannot hold a reference spares the walk). */
export function applyValues(documents: readonly ParsedDocument[], ctx: ValuesContext, file: string, locate: Locate, text?: string): ValuedDocuments {
  if (text !== undefined && !mayHoldValueRef(text)) return { documents, changed: new Set(), findings: [], used: [] };
  const findings: Diagnostic[] = [];
  const used = new Set<string>();
  const changed = new Set<number>();
  const out = documents.map((doc) => {
    const result = substituteValues(doc.value, ctx.values);
    for (const name of result.used) used.add(name);
    const resource = resourceOf(doc.value);
    for (const m of result.missing) {
      findings.push({
        severity: "error",
        code: ErrorCode.VALUE_MISSING,
        file,
        ...locate(file, doc.index, m.path),
        ...(resource === undefined ? {} : { resource }),
        path: formatPath(m.path),
        message: `\${var:${m.name}} has no value in environment ${ctx.environment}`,
        hint: missingValueHint(ctx, m.name),
      });
    }
    if (result.value === doc.value) return doc;
    changed.add(doc.index);
    return { ...doc, value: result.value };
  });
  return { documents: out, changed, findings, used: [...used].sort() };
}

/** A VALUE_UNUSED warning for each value of the environment that no file (`verdicts`) references. */
export function unusedValues(
  ctx: ValuesContext | undefined,
  file: string | undefined,
  verdicts: Iterable<{ readonly valuesUsed?: readonly string[] }>,
): Diagnostic[] {
  if (ctx === undefined) return [];
  const used = new Set<string>();
  for (const v of verdicts) for (const name of v.valuesUsed ?? []) used.add(name);
  return Object.keys(ctx.values)
    .filter((name) => !used.has(name))
    .map((name) => ({
      severity: "warning" as const,
      code: ErrorCode.VALUE_UNUSED,
      ...(file === undefined ? {} : { file }),
      path: ctx.environment === "default" ? `values.${name}` : `environments.${ctx.environment}.values.${name}`,
      message: `value ${name} of environment ${ctx.environment} is used by no resource`,
      hint: `reference it as \${var:${name}}, or remove it`,
    }));
}
