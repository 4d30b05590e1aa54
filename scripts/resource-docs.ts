/**
 * Renders docs/user/resources.md from schemas/*.schema.json: every resource kind's fields with
 * type, required, description, enum values and defaults. Pure (reads the schemas, returns the
 * text); scripts/gen-resource-docs.ts writes it, test/docs/resource-docs.test.ts checks it.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

type Schema = Record<string, unknown> & {
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  $ref?: string;
  oneOf?: Schema[];
  anyOf?: Schema[];
};

interface Row {
  readonly field: string;
  readonly type: string;
  readonly required: boolean;
  readonly description: string;
}

const cell = (text: string): string => text.replaceAll("|", "\\|").replaceAll("\n", " ");
const code = (v: unknown): string => `\`${JSON.stringify(v)}\``;

function loadSchemas(dir: string): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith(".schema.json"))
    .sort())
    out.set(f, JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Schema);
  return out;
}

/** Follows `$ref`s (`file.json#/$defs/x` or `#/$defs/x`), merging the referring node's own keys over the target. */
function deref(schemas: Map<string, Schema>, file: string, node: Schema): { node: Schema; file: string } {
  if (typeof node.$ref !== "string") return { node, file };
  const [target = "", pointer = ""] = node.$ref.split("#");
  const targetFile = target === "" ? file : target;
  let resolved: unknown = schemas.get(targetFile);
  for (const part of pointer.split("/").filter(Boolean)) resolved = (resolved as Record<string, unknown> | undefined)?.[part];
  if (resolved === undefined) throw new Error(`${file}: unresolved $ref ${node.$ref}`);
  const { $ref: _ref, ...own } = node;
  const inner = deref(schemas, targetFile, resolved as Schema);
  return { node: { ...inner.node, ...own, description: own.description ?? inner.node.description }, file: inner.file };
}

function typeOf(raw: Schema, schemas?: Map<string, Schema>, file?: string): string {
  const node = schemas === undefined || file === undefined ? raw : deref(schemas, file, raw).node;
  if ("const" in node) return `constant ${code(node.const)}`;
  const t = node.type ?? (Array.isArray(node.enum) ? [...new Set(node.enum.map((v) => (v === null ? "null" : typeof v)))] : undefined);
  const base = Array.isArray(t)
    ? t.join(" \\| ")
    : typeof t === "string"
      ? t
      : node.oneOf !== undefined || node.anyOf !== undefined
        ? "one of several shapes"
        : "any";
  const items = node.items === undefined ? undefined : typeOf(node.items, schemas, file);
  if (base === "array" && items !== undefined && items !== "any") return `array of ${items}`;
  return base;
}

function details(node: Schema): string {
  const parts: string[] = [];
  if (typeof node.description === "string") parts.push(node.description);
  if (Array.isArray(node.enum)) parts.push(`One of: ${node.enum.map(code).join(", ")}.`);
  const items = node.items;
  if (items !== undefined && Array.isArray(items.enum)) parts.push(`Items one of: ${items.enum.map(code).join(", ")}.`);
  if ("default" in node) parts.push(`Default: ${code(node.default)}.`);
  if (typeof node.minimum === "number" || typeof node.maximum === "number")
    parts.push(`Range: ${typeof node.minimum === "number" ? node.minimum : "…"} to ${typeof node.maximum === "number" ? node.maximum : "…"}.`);
  if (typeof node["x-error"] === "string" && (node.oneOf !== undefined || node.anyOf !== undefined)) parts.push(`Rule: ${node["x-error"]}.`);
  return parts.join(" ");
}

function rows(schemas: Map<string, Schema>, file: string, raw: Schema, prefix: string, out: Row[], depth = 0): void {
  const { node, file: at } = deref(schemas, file, raw);
  const required = new Set(node.required ?? []);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const field = prefix === "" ? name : `${prefix}.${name}`;
    const resolved = deref(schemas, at, child);
    out.push({ field, type: typeOf(resolved.node, schemas, resolved.file), required: required.has(name), description: details(resolved.node) });
    if (depth > 3) continue;
    if (resolved.node.properties !== undefined) rows(schemas, resolved.file, resolved.node, field, out, depth + 1);
    const items = resolved.node.items === undefined ? undefined : deref(schemas, resolved.file, resolved.node.items);
    if (items?.node.properties !== undefined) rows(schemas, items.file, items.node, `${field}[]`, out, depth + 1);
  }
}

function kindSection(schemas: Map<string, Schema>, file: string, schema: Schema): string[] {
  const out: Row[] = [];
  rows(schemas, file, schema, "", out);
  const spec = schema.properties?.spec;
  const rule = spec !== undefined && typeof spec["x-error"] === "string" ? [`Rule: ${spec["x-error"]}.`, ""] : [];
  return [
    `## ${String(schema.title)}`,
    "",
    `Schema: [\`schemas/${file}\`](../../schemas/${file})`,
    "",
    typeof schema.description === "string" ? schema.description : "",
    "",
    ...rule,
    "| Field | Type | Required | Description |",
    "| --- | --- | --- | --- |",
    ...out.map((r) => `| \`${r.field}\` | ${cell(r.type)} | ${r.required ? "yes" : "no"} | ${cell(r.description)} |`),
    "",
  ];
}

/** The whole of docs/user/resources.md, from the schemas in `schemaDir`. */
export function renderResourceDocs(schemaDir: string): string {
  const schemas = loadSchemas(schemaDir);
  const kinds = (schemas.get("resource.schema.json")?.properties?.kind?.enum ?? []) as string[];
  const byKind = new Map(
    [...schemas].flatMap(([f, s]) => {
      const k = s.properties?.kind?.const;
      return typeof k === "string" ? [[k, f] as const] : [];
    }),
  );
  const lines = [
    "# Resource kinds",
    "",
    "<!-- Generated from schemas/*.schema.json by `npm run docs:resources`: do not edit by hand. -->",
    "",
    "Every resource file holds documents with `apiVersion: gatesync.dev/v1`, a `kind`, `metadata` and a `spec`.",
    "Fields are listed with their path below the document (`spec.query.listenPath`); `[]` marks the items of a list.",
    "",
    ...kinds.map((k) => `- [${k}](#${k.toLowerCase()})`),
    "",
  ];
  for (const kind of kinds) {
    const file = byKind.get(kind);
    if (file === undefined) throw new Error(`no schema file for kind ${kind}`);
    lines.push(...kindSection(schemas, file, schemas.get(file) as Schema));
  }
  return `${lines.join("\n").trimEnd()}\n`;
}
