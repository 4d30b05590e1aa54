/**
 * Pairs of OpenAPI documents made from the shared corpus (test/fixtures/shared/corpus/oas): each mutation
 * edits a copy of a real document the way a merge request would.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { sharedRoot } from "./temp-repo.js";

type Json = Record<string, unknown>;
const methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

export interface CorpusDoc {
  readonly file: string;
  readonly doc: Json;
}

/**
 * Corpus documents the OpenAPI schema accepts but the gateway's semantic checks refuse, made
 * acceptable: an example fragment whose `{id}` has a parameter `petId`, and whose security
 * scheme is not declared.
 */
const repairs: Record<string, (doc: Json) => Json> = {
  "3.1/operation-object-example.yaml": (doc) => {
    const paths = obj(doc.paths);
    const { ["/pets/{id}"]: item, ...rest } = paths;
    const components = obj(doc.components ?? {});
    return {
      ...doc,
      paths: { ...rest, "/pets/{petId}": item },
      components: {
        ...components,
        securitySchemes: {
          ...obj(components.securitySchemes ?? {}),
          petstore_auth: {
            type: "oauth2",
            flows: { implicit: { authorizationUrl: "https://example.com/auth", scopes: { "write:pets": "w", "read:pets": "r" } } },
          },
        },
      },
    };
  },
};

export function corpusDocs(version: "3.0" | "3.1"): CorpusDoc[] {
  const dir = path.join(sharedRoot, "corpus/oas", version, "pass");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((file) => {
      const doc = parse(readFileSync(path.join(dir, file), "utf8")) as Json;
      return { file, doc: repairs[`${version}/${file}`]?.(doc) ?? doc };
    });
}

const obj = (v: unknown): Json => v as Json;

/** The first operation: [path, method]. */
export function firstOperation(doc: Json): [string, string] | undefined {
  const paths = obj(doc.paths ?? {});
  for (const p of Object.keys(paths)) {
    const m = methods.find((x) => obj(paths[p] ?? {})[x] !== undefined);
    if (m !== undefined) return [p, m];
  }
  return undefined;
}

/**
 * Where the first typed schema property of a request body or response lives (following local
 * $refs); parameters' schemas are left out (api-smart-diff misses changes inside a parameter's
 * `content`: breaking-rules.test.ts shows those come out unclassified).
 */
export function firstTypedProperty(doc: Json): string[] | undefined {
  const seen = new Set<string>();
  const visit = (node: unknown, loc: string[]): string[] | undefined => {
    if (node === null || typeof node !== "object") return undefined;
    const ref = obj(node).$ref;
    if (typeof ref === "string" && ref.startsWith("#/")) {
      if (seen.has(ref)) return undefined;
      seen.add(ref);
      const target = ref
        .slice(2)
        .split("/")
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
      return visit(
        target.reduce<unknown>((n, k) => obj(n ?? {})[k], doc),
        target,
      );
    }
    if (loc.at(-2) === "properties" && typeof obj(node).type === "string") return loc;
    if (loc.at(-1) === "parameters") return undefined;
    for (const [k, v] of Object.entries(node)) {
      const found = visit(v, [...loc, k]);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit(doc.paths, ["paths"]);
}

const at = (doc: Json, loc: readonly string[]): Json => loc.reduce<Json>((n, k) => obj(n[k]), doc);

export interface Mutation {
  readonly name: string;
  /** The changed copy, or undefined when the document has nothing to change this way. */
  readonly apply: (doc: Json) => Json | undefined;
}

function edit(doc: Json, fn: (copy: Json) => void): Json {
  const copy = structuredClone(doc);
  fn(copy);
  return copy;
}

export const mutations = {
  removeOperation: {
    name: "removing an operation",
    apply: (doc) => {
      const op = firstOperation(doc);
      return op === undefined ? undefined : edit(doc, (c) => delete at(c, ["paths", op[0]])[op[1]]);
    },
  },
  addRequiredParameter: {
    name: "adding a required parameter",
    apply: (doc) => {
      const op = firstOperation(doc);
      if (op === undefined) return undefined;
      return edit(doc, (c) => {
        const o = at(c, ["paths", ...op]);
        o.parameters = [
          ...((o.parameters as unknown[] | undefined) ?? []),
          { name: "gatesync_tenant", in: "query", required: true, schema: { type: "string" } },
        ];
      });
    },
  },
  changeType: {
    name: "changing a type",
    apply: (doc) => {
      const loc = firstTypedProperty(doc);
      if (loc === undefined) return undefined;
      return edit(doc, (c) => {
        const p = at(c, loc);
        p.type = p.type === "string" ? "integer" : "string";
      });
    },
  },
  addOptionalField: {
    name: "adding an optional field",
    apply: (doc) => {
      const loc = firstTypedProperty(doc);
      return loc === undefined ? undefined : edit(doc, (c) => (at(c, loc.slice(0, -1)).gatesync_note = { type: "string", description: "added by the test" }));
    },
  },
  editDescription: {
    name: "editing a description",
    apply: (doc) => {
      const op = firstOperation(doc);
      return op === undefined ? undefined : edit(doc, (c) => (at(c, ["paths", ...op]).description = "Edited in a merge request."));
    },
  },
} satisfies Record<string, Mutation>;
