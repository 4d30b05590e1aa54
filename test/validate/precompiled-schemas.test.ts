/**
 * The schemas are compiled at build time (ajv's standalone code in src/validate/compiled/): the
 * committed code must be what `npm run schemas` makes of the current schemas, and it must give
 * the verdicts and the errors of the validators compiled at run time — gatesync's schemas as
 * ajv compiled them before, the OpenAPI schemas as @seriousme/openapi-schema-validator does —
 * on real documents (the repository's examples, the shared OpenAPI corpus) and on mutations of
 * them that break them in many places.
 */
import { readFileSync, readdirSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { KindModule } from "../../src/kinds/kind.js";
import { allKinds } from "../../src/kinds/registry.js";
import { validators as compiled } from "../../src/validate/compiled/gatesync-schemas.js";
import { OpenApiChecker } from "../../src/validate/document/openapi.js";
import { PrecompiledOpenApiValidator, openApiAjvOptions } from "../../src/validate/document/openapi-validator.js";
import type { OpenApiValidation } from "../../src/validate/document/openapi-validator.js";
import { SchemaRegistry } from "../../src/validate/schema/schema-registry.js";
import { compiledDir, runtimeSchemaValidators, schemaNames, standaloneModules } from "../../scripts/standalone-validators.js";
import { projectRoot, sharedRoot } from "../helpers/temp-repo.js";

type Json = Record<string, unknown>;

function yamlDocuments(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, "utf8")).flatMap((d) => (Array.isArray(d) ? [] : [d.toJS({ maxAliasCount: -1 }) as unknown]));
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Every path to a value inside `value`, parents first. */
function paths(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== "object") return [at];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return [at, ...entries.flatMap(([k, v]) => paths(v, [...at, k]))];
}

function edited(value: unknown, at: ReadonlyArray<string | number>, edit: (parent: Json | unknown[], key: string | number) => void): unknown {
  const copy = structuredClone(value) as Json;
  let parent: Json = copy;
  for (const k of at.slice(0, -1)) parent = parent[k] as Json;
  edit(parent, at.at(-1)!);
  return copy;
}

/** The document broken in up to `limit` places, each in several ways (a wrong type, a removal, an unknown member, a bad reference). */
function mutations(value: unknown, limit: number): unknown[] {
  const all = paths(value).filter((p) => p.length > 0);
  const step = Math.max(1, Math.floor(all.length / limit));
  const out: unknown[] = [];
  for (let i = 0; i < all.length; i += step) {
    const at = all[i]!;
    for (const replacement of [42, "x-not-allowed", null, {}, [], { $ref: "#/components/schemas/Missing" }, { $ref: "other.yaml#/components/schemas/Pet" }]) {
      out.push(edited(value, at, (parent, key) => ((parent as Json)[key] = replacement)));
    }
    out.push(edited(value, at, (parent, key) => (Array.isArray(parent) ? parent.splice(Number(key), 1) : delete parent[key])));
    out.push(
      edited(value, at, (parent, key) => {
        const v = (parent as Json)[key];
        if (v !== null && typeof v === "object" && !Array.isArray(v)) (v as Json).descriptoin = "misspelt";
      }),
    );
  }
  return out;
}

const examples = [
  ...yamlFiles(path.join(projectRoot, "examples/config")),
  path.join(projectRoot, "examples/gatesync.yaml"),
  path.join(projectRoot, "examples/sandbox-fixtures.yaml"),
];

const corpus = (set: string): unknown[] => yamlFiles(path.join(sharedRoot, "corpus/oas", set)).flatMap(yamlDocuments);
const oasSets = ["3.0/pass", "3.1/pass", "3.1/fail"];

describe("the precompiled schemas", () => {
  it("are what `npm run schemas` generates from the current schemas (run it after changing a schema)", async () => {
    const expected = standaloneModules();
    expect((await readdir(compiledDir)).sort()).toEqual(Object.keys(expected).sort());
    for (const [file, text] of Object.entries(expected)) expect(await readFile(path.join(compiledDir, file), "utf8"), file).toBe(text);
  });

  it("cover every schema the kinds and the commands validate against", () => {
    const used = [
      ...allKinds().flatMap((k) => [k.schemaFile, ...(k.attached === undefined ? [] : [k.attached.schema])]),
      "gatesync-config.schema.json",
      "plan.schema.json",
      "sandbox-fixtures.schema.json",
    ];
    expect(Object.keys(compiled).sort()).toEqual(schemaNames().sort());
    for (const name of used) expect(Object.keys(compiled)).toContain(name);
    expect(() => new SchemaRegistry().validate("nothing.schema.json", {})).toThrow(/not registered/);
  });

  it("give the verdicts and errors of the schemas compiled at run time, on the examples and their mutations", () => {
    const runtime = runtimeSchemaValidators();
    const [precompiledRegistry, runtimeRegistry] = [new SchemaRegistry(), new SchemaRegistry(runtime)];
    const differences: unknown[] = [];
    let [valid, invalid] = [0, 0];
    for (const { schemas, value } of schemaCases()) {
      for (const name of schemas) {
        const [slow, fast] = [runtime(name)!, compiled[name]!];
        const verdict = fast(value);
        const same = verdict === slow(value) && (verdict || JSON.stringify(fast.errors) === JSON.stringify(slow.errors));
        if (!same || JSON.stringify(precompiledRegistry.validate(name, value)) !== JSON.stringify(runtimeRegistry.validate(name, value)))
          differences.push({ name, value });
        if (verdict) valid++;
        else invalid++;
      }
    }
    expect(differences.slice(0, 3)).toEqual([]);
    // both paths exercised, many times
    expect(valid).toBeGreaterThan(50);
    expect(invalid).toBeGreaterThan(500);
  });
});

/** The examples (each with the schemas it is checked against) and their mutations. */
function schemaCases(): Array<{ schemas: readonly string[]; value: unknown }> {
  const kinds = new Map<string, KindModule>(allKinds().map((k) => [k.kind, k]));
  const schemasOf = (file: string, value: unknown): string[] => {
    if (file.endsWith("gatesync.yaml")) return ["gatesync-config.schema.json"];
    if (file.endsWith("sandbox-fixtures.yaml")) return ["sandbox-fixtures.schema.json"];
    const kind = kinds.get(String((value as Json | null)?.kind));
    if (kind !== undefined) return ["resource.schema.json", kind.schemaFile];
    return ["api-definition.schema.json#/$defs/oas"];
  };
  const documents = [
    ...examples.flatMap((file) => yamlDocuments(file).map((value) => ({ file, value }))),
    ...corpus("3.1/pass")
      .slice(0, 4)
      .map((value) => ({ file: "oas", value })),
  ];
  return documents.flatMap(({ file, value }) => [value, ...mutations(value, 10)].map((v) => ({ schemas: schemasOf(file, value), value: v })));
}

describe("the precompiled OpenAPI schemas", () => {
  const documents = [...oasSets.flatMap(corpus), ...yamlFiles(path.join(projectRoot, "examples/config/openapi")).flatMap(yamlDocuments)];
  const extra: unknown[] = [
    { swagger: "2.0", info: { title: "t", version: "1" }, paths: {} },
    { openapi: "3.2.0", info: { title: "t", version: "1" }, paths: {} },
    { openapi: 3.1, info: { title: "t", version: "1" }, paths: {} },
    { info: { title: "t", version: "1" } },
  ];

  it("give @seriousme/openapi-schema-validator's results on the corpus, the examples and their mutations", async () => {
    const [fast, library] = [new PrecompiledOpenApiValidator(), new Validator({ ...openApiAjvOptions })];
    const [fastChecker, libraryChecker] = [new OpenApiChecker(fast), new OpenApiChecker(library)];
    const values = [...documents, ...extra, ...documents.flatMap((d) => mutations(d, 6))];
    const seen = { valid: 0, schema: 0, message: 0 };
    const differences: unknown[] = [];
    for (const value of values) {
      const expected = await library.validate(value as Json);
      const same = JSON.stringify(await fast.validate(value as Json)) === JSON.stringify(expected);
      if (!same || JSON.stringify(await fastChecker.check(value)) !== JSON.stringify(await libraryChecker.check(value))) differences.push(value);
      seen[kind(expected)]++;
    }
    expect(differences.slice(0, 3)).toEqual([]);
    // each of the library's outcomes came up: valid, schema errors, a message (references, version)
    expect(seen.valid).toBeGreaterThan(40);
    expect(seen.schema).toBeGreaterThan(200);
    expect(seen.message).toBeGreaterThan(20);
  });
});

function kind(result: OpenApiValidation): "valid" | "schema" | "message" {
  return result.valid ? "valid" : typeof result.errors === "string" ? "message" : "schema";
}
