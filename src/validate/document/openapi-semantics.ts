/**
 * The production gateway's checks of an OpenAPI document after its schema (operation 1 refuses
 * each with 400): security requirements name declared schemes, every `{param}` of a path is a
 * declared path parameter of each of its operations and no other path parameter is declared,
 * operationIds are unique, component names match `^[a-zA-Z0-9._-]+$`. Every problem is
 * returned, each at the member at fault, so that validate reports them all at once.
 */
import type { PathSegment } from "../../text/field-path.js";
import type { SchemaIssue } from "../schema/schema-registry.js";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
export const componentName = /^[a-zA-Z0-9._-]+$/;

/** Every problem the gateway's semantic checks find in a document the OpenAPI schema accepts. */
export function semanticIssues(document: Json): SchemaIssue[] {
  return [...securityIssues(document), ...pathParameterIssues(document), ...operationIdIssues(document), ...componentNameIssues(document)];
}

/** The operations of the document: path, method, the path item and the operation. */
function* operations(document: Json): Generator<{ path: string; method: string; item: Json; operation: Json }> {
  if (!isObject(document.paths)) return;
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isObject(item)) continue;
    for (const method of methods) {
      const operation = item[method];
      if (isObject(operation)) yield { path, method, item, operation };
    }
  }
}

function securityIssues(document: Json): SchemaIssue[] {
  const schemes = isObject(document.components) && isObject(document.components.securitySchemes) ? Object.keys(document.components.securitySchemes) : [];
  const declared = schemes.length === 0 ? "none is declared" : `declared: ${schemes.join(", ")}`;
  const check = (requirements: unknown, at: readonly PathSegment[]): SchemaIssue[] =>
    !Array.isArray(requirements)
      ? []
      : requirements.flatMap((requirement, i) =>
          !isObject(requirement)
            ? []
            : Object.keys(requirement)
                .filter((name) => !schemes.includes(name))
                .map((name) => ({
                  path: [...at, i, name],
                  key: true,
                  message: `the security requirement names the scheme \`${name}\`, which components.securitySchemes does not declare`,
                  hint: `declare \`${name}\` under components.securitySchemes, or name a declared scheme (${declared})`,
                })),
        );
  const issues = check(document.security, ["security"]);
  for (const { path, method, operation } of operations(document)) issues.push(...check(operation.security, ["paths", path, method, "security"]));
  return issues;
}

/** The value an internal `$ref` points at (`#/components/parameters/id`), or the value itself. */
function resolved(document: Json, value: unknown): unknown {
  if (!isObject(value) || typeof value.$ref !== "string" || !value.$ref.startsWith("#/")) return value;
  let node: unknown = document;
  for (const raw of value.$ref.slice(2).split("/")) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    node = isObject(node) ? node[segment] : undefined;
  }
  return node;
}

/** The path parameters declared at `at` (a path item's or an operation's `parameters`), with where each is. */
function declaredPathParameters(document: Json, parameters: unknown, at: readonly PathSegment[]): Map<string, readonly PathSegment[]> {
  const found = new Map<string, readonly PathSegment[]>();
  if (!Array.isArray(parameters)) return found;
  parameters.forEach((p, i) => {
    const parameter = resolved(document, p);
    if (isObject(parameter) && parameter.in === "path" && typeof parameter.name === "string") found.set(parameter.name, [...at, "parameters", i]);
  });
  return found;
}

function pathParameterIssues(document: Json): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  for (const { path, method, item, operation } of operations(document)) {
    const template = new Set([...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!));
    // an operation's parameter overrides the path item's of the same name and location
    const declared = new Map([
      ...declaredPathParameters(document, item.parameters, ["paths", path]),
      ...declaredPathParameters(document, operation.parameters, ["paths", path, method]),
    ]);
    const verb = method.toUpperCase();
    for (const name of template) {
      if (declared.has(name)) continue;
      issues.push({
        path: ["paths", path, method],
        key: true,
        message: `\`{${name}}\` in the path has no path parameter declared for ${verb} ${path}`,
        hint: `declare it under the operation's (or the path's) parameters: { name: ${name}, in: path, required: true, schema: { type: string } }`,
      });
    }
    for (const [name, at] of declared) {
      if (template.has(name)) continue;
      issues.push({
        path: at,
        key: false,
        message: `the path parameter \`${name}\` of ${verb} ${path} is not in the path`,
        hint: `add \`{${name}}\` to the path, or remove the parameter`,
      });
    }
  }
  return issues;
}

function operationIdIssues(document: Json): SchemaIssue[] {
  const first = new Map<string, string>();
  const issues: SchemaIssue[] = [];
  for (const { path, method, operation } of operations(document)) {
    const id = operation.operationId;
    if (typeof id !== "string") continue;
    const here = `${method.toUpperCase()} ${path}`;
    const earlier = first.get(id);
    if (earlier === undefined) first.set(id, here);
    else
      issues.push({
        path: ["paths", path, method, "operationId"],
        key: false,
        message: `operationId \`${id}\` is used by ${earlier} already`,
        hint: "give each operation its own operationId",
      });
  }
  return issues;
}

function componentNameIssues(document: Json): SchemaIssue[] {
  if (!isObject(document.components)) return [];
  const issues: SchemaIssue[] = [];
  for (const [group, members] of Object.entries(document.components)) {
    if (group.startsWith("x-") || !isObject(members)) continue;
    for (const name of Object.keys(members)) {
      if (componentName.test(name)) continue;
      issues.push({
        path: ["components", group, name],
        key: true,
        message: `the component name \`${name}\` has characters outside ^[a-zA-Z0-9._-]+$`,
        hint: `rename it (e.g. \`${name.replace(/[^a-zA-Z0-9._-]/g, "_")}\`) and the references to it`,
      });
    }
  }
  return issues;
}
