/**
 * The kind registry is the one list of kinds: the resource schema is generated from it, every
 * kind has its schema and operations, and the contract depends on no kind.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { operations } from "../../src/contract/operations.js";
import { withExtensionId } from "../../src/kinds/api-definition.js";
import { allKinds, kindModule, kindNames } from "../../src/kinds/registry.js";
import { resourceSchemaText } from "../../src/kinds/resource-schema.js";
import { projectRoot } from "../helpers/temp-repo.js";

const schemas = path.join(projectRoot, "schemas");

describe("the kind registry", () => {
  it("generates schemas/resource.schema.json exactly (run `npm run schemas` after adding a kind)", async () => {
    expect(await readFile(path.join(schemas, "resource.schema.json"), "utf8")).toBe(resourceSchemaText(allKinds()));
  });

  it("registers every kind module of src/kinds, once, each with its schema file naming it", async () => {
    const dir = path.join(projectRoot, "src/kinds");
    const exported: unknown[] = [];
    for (const file of (await readdir(dir)).filter((f) => f.endsWith(".ts"))) {
      const module = (await import(pathToFileURL(path.join(dir, file)).href)) as Record<string, unknown>;
      exported.push(...Object.values(module).filter(isKindModule));
    }
    expect(new Set(exported)).toEqual(new Set(allKinds()));
    expect(new Set(kindNames).size).toBe(allKinds().length);
    for (const k of allKinds()) {
      const schema = JSON.parse(await readFile(path.join(schemas, k.schemaFile), "utf8")) as { properties: { kind: { const: string } } };
      expect(schema.properties.kind.const, k.schemaFile).toBe(k.kind);
    }
  });

  it("has a registered kind for every resource schema (a kind const and a spec) in schemas/", async () => {
    const resourceSchemas: string[] = [];
    for (const file of (await readdir(schemas)).filter((f) => f.endsWith(".schema.json"))) {
      const schema = JSON.parse(await readFile(path.join(schemas, file), "utf8")) as { properties?: { kind?: { const?: unknown }; spec?: unknown } };
      const kind = schema.properties?.kind?.const;
      if (kind === undefined || schema.properties?.spec === undefined) continue;
      resourceSchemas.push(file);
      expect(kindNames, file).toContain(kind);
    }
    expect(resourceSchemas.length).toBe(kindNames.length);
  });

  it("writes each kind through operations of the contract, on its own interface", () => {
    for (const k of allKinds()) {
      const request = k.request(sampleSpec(k.kind), { apiIdOf: () => "api-1", appTypeProviders: new Set() });
      const used = [request.create, request.update, k.deactivation?.operation].filter((o) => o !== undefined);
      expect(used.length, k.kind).toBeGreaterThan(0);
      for (const name of used) expect(operations[name].interface, `${k.kind} ${name}`).toBe(k.interface);
    }
  });

  it("keeps the contract free of kinds: src/contract imports nothing from src/kinds", async () => {
    const dir = path.join(projectRoot, "src/contract");
    for (const file of await readdir(dir)) expect(await readFile(path.join(dir, file), "utf8"), file).not.toMatch(/from "\.\.\/kinds\//);
  });
});

/** A value shaped like a KindModule (kind name, schema file, request builder). */
function isKindModule(value: unknown): boolean {
  return typeof value === "object" && value !== null && "kind" in value && "schemaFile" in value && "request" in value;
}

function sampleSpec(kind: string): Record<string, unknown> {
  const samples: Record<string, Record<string, unknown>> = {
    ApiDefinition: { apiId: "api-1", definition: { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} } },
    OAuthClient: { apiId: "api-1", clientId: "c" },
    OrgKey: { keyId: "k" },
    ClientType: { providerId: 1, clientTypeId: 2, Name: "n", ResponseTypes: "code", GrantType: "pkce" },
    ApiProduct: { Name: "p", ProviderID: 1 },
    PortalWebhook: { Name: "w", URL: "https://h", Method: "POST" },
    DashboardWebhook: { method: "POST", target_path: "https://h" },
    LlmSettings: { attributes: {} },
  };
  return samples[kind] ?? {};
}

describe("ApiDefinition: the extension's info.id", () => {
  const doc = { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} };
  const kind = kindModule("ApiDefinition");
  const ctx = { apiIdOf: () => undefined, appTypeProviders: new Set<number>() };

  it("is set to the path's apiID when the extension leaves it out, sent and compared", () => {
    const spec = { apiId: "petstore-v1", definition: { ...doc, "x-gw-api-gateway": { info: { name: "Pets" }, upstream: { url: "http://u" } } } };
    const request = kind.request(spec, ctx);
    const expected = { ...doc, "x-gw-api-gateway": { info: { name: "Pets", id: "petstore-v1" }, upstream: { url: "http://u" } } };
    expect(request.body).toEqual(expected);
    expect(request.compare).toEqual({ query: {}, definition: expected });
    // the spec itself is not changed
    expect(spec.definition["x-gw-api-gateway"].info).toEqual({ name: "Pets" });
  });

  it("is left alone when given, and no extension is added when there is none", () => {
    const given = { ...doc, "x-gw-api-gateway": { info: { id: "petstore-v1" } } };
    expect(kind.request({ apiId: "petstore-v1", definition: given }, ctx).body).toEqual(given);
    expect(kind.request({ apiId: "petstore-v1", definition: doc }, ctx).body).toEqual(doc);
    expect(withExtensionId(doc, "x")).toBe(doc);
  });

  it("is filled in from the record's address when an orphan applied without it is switched off", () => {
    const applied = { query: { listenPath: "/old/" }, definition: { ...doc, "x-gw-api-gateway": { info: { name: "Old" }, upstream: { url: "http://u" } } } };
    expect(kind.deactivation!.body(applied, { apiID: "old-api" })).toEqual({
      ...doc,
      "x-gw-api-gateway": {
        info: { name: "Old", id: "old-api", state: { active: false } },
        upstream: { url: "http://u" },
        server: { listenPath: { value: "/old/", strip: true } },
      },
    });
    // without a listen path anywhere, no body the gateway would accept can be built
    expect(kind.deactivation!.body({ query: {}, definition: applied.definition }, { apiID: "old-api" })).toBeUndefined();
  });
});
