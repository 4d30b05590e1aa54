/**
 * Issue 30, point 2: an ApiDefinition is validated as the gateway validates it — the OpenAPI
 * schema merged with the published `x-gw-api-gateway` schema, then the gateway's semantic
 * checks. Each refused extension and each semantic case is a located `validate` error (in the
 * resource, or in the definitionFile), all reported at once; the sandbox refuses the same
 * bodies with 400 and a message naming the member.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { Diagnostic } from "../../src/errors.js";
import { formatPath } from "../../src/text/field-path.js";
import type { PathSegment } from "../../src/text/field-path.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { doc } from "../helpers/plan.js";
import { call, gw, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const validator = new RepositoryValidator();
let sb: SandboxHandle;
beforeAll(async () => {
  sb = await testSandbox();
});
afterAll(async () => {
  await sb.stop();
  await removeTempRepos();
});

type Json = Record<string, unknown>;
const apiId = "petstore-v1";
const extension = (): Json => ({
  info: { id: apiId, name: "Petstore", state: { active: true } },
  upstream: { url: "http://petstore.internal:8080" },
  server: { listenPath: { value: "/petstore/", strip: true } },
});
const documentWith = (ext: unknown, more: Json = {}): Json => ({
  openapi: "3.0.3",
  info: { title: "Petstore", version: "1" },
  paths: { "/pets": { get: { operationId: "listPets", responses: { "200": { description: "ok" } } } } },
  ...more,
  ...(ext === undefined ? {} : { "x-gw-api-gateway": ext }),
});

/** An extension with one change; `at`: the member the error must stand at (below the extension). */
interface Case {
  readonly name: string;
  readonly change: (ext: Json) => unknown;
  readonly at: string;
}
const info = (e: Json): Json => e.info as Json;
const server = (e: Json): Json => e.server as Json;
const cases: Case[] = [
  { name: "missing upstream", change: (e) => ({ ...e, upstream: undefined }), at: "" },
  { name: "missing server", change: (e) => ({ ...e, server: undefined }), at: "" },
  { name: "missing info", change: (e) => ({ ...e, info: undefined }), at: "" },
  { name: "missing info.name", change: (e) => ({ ...e, info: { ...info(e), name: undefined } }), at: ".info" },
  { name: "missing info.state", change: (e) => ({ ...e, info: { ...info(e), state: undefined } }), at: ".info" },
  { name: "missing state.active", change: (e) => ({ ...e, info: { ...info(e), state: {} } }), at: ".info.state" },
  { name: "state.active not a boolean", change: (e) => ({ ...e, info: { ...info(e), state: { active: "yes" } } }), at: ".info.state.active" },
  { name: "blank name", change: (e) => ({ ...e, info: { ...info(e), name: "  " } }), at: ".info.name" },
  { name: "empty listen path", change: (e) => ({ ...e, server: { listenPath: { value: "" } } }), at: ".server.listenPath.value" },
  { name: "customDomain as a string", change: (e) => ({ ...e, server: { ...server(e), customDomain: "api.example.com" } }), at: ".server.customDomain" },
  {
    name: "authentication without enabled",
    change: (e) => ({ ...e, server: { ...server(e), authentication: { stripAuthorizationData: true } } }),
    at: ".server.authentication",
  },
  { name: "batchProcessing without enabled", change: (e) => ({ ...e, server: { ...server(e), batchProcessing: {} } }), at: ".server.batchProcessing" },
  { name: "an upstream URL that is no URI reference", change: (e) => ({ ...e, upstream: { url: "http://bad host/" } }), at: ".upstream.url" },
  { name: "an empty extension", change: () => ({}), at: "" },
];

const strip = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;
const resource = (definition: Json): string => doc("ApiDefinition", "petstore", stringify({ apiId, definition }).trimEnd());

async function errorsOf(files: Record<string, string>): Promise<Diagnostic[]> {
  const dir = await tempRepo(files);
  return (await validator.validate({ root: dir })).diagnostics.filter((d) => d.severity === "error");
}

const patch = (body: unknown): ReturnType<typeof call> =>
  call(`${sb.urls.gateway}/gw/apis/oas/${apiId}`, { method: "PATCH", headers: gw, body: body as object });

describe("the gateway extension, against the published schema", () => {
  it("a complete extension is valid for validate and accepted by the sandbox", async () => {
    expect(await errorsOf({ "api.yaml": resource(documentWith(extension())) })).toEqual([]);
    expect((await patch(documentWith(extension()))).status).toBe(200);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s: a located validate error at the member, and 400 from the sandbox", async (_name, c) => {
    const definition = strip(documentWith(c.change(extension()))) as Json;
    const text = resource(definition);
    const errors = await errorsOf({ "api.yaml": text });
    expect(errors.length).toBeGreaterThan(0);
    // a wrong type on a member gatesync's own schema models is caught there first (SCHEMA_VIOLATION)
    for (const e of errors) {
      expect(e).toMatchObject({ file: "api.yaml", resource: "ApiDefinition/petstore" });
      expect(["OPENAPI_INVALID", "SCHEMA_VIOLATION"]).toContain(e.code);
    }
    expect(errors.map((e) => e.path)).toContain(formatPath(["spec", "definition", "x-gw-api-gateway", ...c.at.split(".").filter((s) => s !== "")]));
    for (const e of errors) {
      expect(e.line).toBeGreaterThan(0);
      expect(e.column).toBeGreaterThan(0);
    }
    const answer = await patch(definition);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ status: "error" });
    expect((answer.body as { message: string }).message).toMatch(/^x-gw-api-gateway/);
  });

  it("reports every problem of an extension at once, in a definitionFile at its line and column", async () => {
    const ext = { info: { id: apiId, name: "", state: {} }, server: { listenPath: { value: "" }, customDomain: "x" } };
    const file = stringify(documentWith(ext));
    const errors = await errorsOf({ "api.yaml": doc("ApiDefinition", "petstore", `apiId: ${apiId}\ndefinitionFile: openapi.yaml`), "openapi.yaml": file });
    const at = (p: string): Diagnostic | undefined => errors.find((e) => e.path === p);
    for (const p of [
      "x-gw-api-gateway",
      "x-gw-api-gateway.info.name",
      "x-gw-api-gateway.info.state",
      "x-gw-api-gateway.server.listenPath.value",
      "x-gw-api-gateway.server.customDomain",
    ].map((x) => formatPath(x.split(".")))) {
      expect(at(p), p).toMatchObject({ file: "openapi.yaml", resource: "ApiDefinition/petstore" });
    }
    const lines = file.split("\n");
    const name = at(formatPath(["x-gw-api-gateway", "info", "name"]))!;
    expect(lines[name.line! - 1]!.slice(name.column! - 1)).toMatch(/^""/);
    expect(at(formatPath(["x-gw-api-gateway"]))!.message).toMatch(/missing required field `upstream`/);
  });
});

describe("the gateway's semantic checks", () => {
  const semantic = documentWith(undefined, {
    security: [{ apiKey: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { "Pet Shop": { type: "object" }, "Pet.v1_ok-2": { type: "object" } },
    },
    paths: {
      "/pets": { get: { operationId: "listPets", responses: { "200": { description: "ok" } } } },
      "/pets/{petId}": {
        get: { operationId: "listPets", responses: { "200": { description: "ok" } } },
        delete: {
          parameters: [{ name: "petId", in: "path", required: true, schema: { type: "string" } }],
          security: [{ oauth: [] }],
          responses: { "204": { description: "gone" } },
        },
      },
      "/stores": {
        get: { parameters: [{ name: "storeId", in: "path", required: true, schema: { type: "string" } }], responses: { "200": { description: "ok" } } },
      },
    },
  });

  it("finds each problem, all at once, each located at its member", async () => {
    const text = resource(semantic);
    const errors = await errorsOf({ "api.yaml": text });
    const byPath = new Map(errors.map((e) => [e.path, e]));
    const at = (...p: PathSegment[]): string => formatPath(["spec", "definition", ...p]);
    const expected: Array<[string, RegExp]> = [
      [at("security", 0, "apiKey"), /security requirement names the scheme `apiKey`/],
      [at("paths", "/pets/{petId}", "delete", "security", 0, "oauth"), /scheme `oauth`/],
      [at("paths", "/pets/{petId}", "get"), /`\{petId\}` in the path has no path parameter declared for GET/],
      [at("paths", "/stores", "get", "parameters", 0), /path parameter `storeId` of GET \/stores is not in the path/],
      [at("paths", "/pets/{petId}", "get", "operationId"), /operationId `listPets` is used by GET \/pets already/],
      [at("components", "schemas", "Pet Shop"), /component name `Pet Shop`/],
    ];
    for (const [p, message] of expected) {
      expect(byPath.get(p), p).toMatchObject({ code: "OPENAPI_INVALID", file: "api.yaml" });
      expect(byPath.get(p)!.message).toMatch(message);
      expect(byPath.get(p)!.line).toBeGreaterThan(0);
    }
    expect(errors).toHaveLength(expected.length);
    const fixed = documentWith(undefined, {
      paths: {
        "/pets/{petId}": {
          parameters: [{ name: "petId", in: "path", required: true, schema: { type: "string" } }],
          get: { operationId: "getPet", responses: { "200": { description: "ok" } } },
        },
      },
    });
    expect(await errorsOf({ "api.yaml": resource(fixed) })).toEqual([]);
    expect((await patch(fixed)).status).toBe(200);
  });

  const single: Array<[string, Json, RegExp]> = [
    ["an undeclared security scheme", documentWith(undefined, { security: [{ apiKey: [] }] }), /apiKey/],
    [
      "a {param} without a path parameter",
      documentWith(undefined, { paths: { "/pets/{petId}": { get: { responses: { "200": { description: "ok" } } } } } }),
      /petId/,
    ],
    [
      "a path parameter not in the path",
      documentWith(undefined, {
        paths: {
          "/pets": {
            get: { parameters: [{ name: "x", in: "path", required: true, schema: { type: "string" } }], responses: { "200": { description: "ok" } } },
          },
        },
      }),
      /\bx\b/,
    ],
    [
      "a duplicate operationId",
      documentWith(undefined, {
        paths: {
          "/a": { get: { operationId: "same", responses: { "200": { description: "ok" } } } },
          "/b": { get: { operationId: "same", responses: { "200": { description: "ok" } } } },
        },
      }),
      /same/,
    ],
    ["a component name outside ^[a-zA-Z0-9._-]+$", documentWith(undefined, { components: { schemas: { "Pet/Shop": { type: "object" } } } }), /Pet\/Shop/],
  ];
  it.each(single)("%s: 400 from the sandbox with the validator's message", async (_name, body, message) => {
    const answer = await patch(body);
    expect(answer.status).toBe(400);
    expect((answer.body as { message: string }).message).toMatch(message);
    expect((await errorsOf({ "api.yaml": resource(body) })).length).toBe(1);
  });

  it("does not validate examples (a wrong example is accepted)", async () => {
    const body = documentWith(undefined, {
      paths: {
        "/pets": {
          get: { responses: { "200": { description: "ok", content: { "application/json": { schema: { type: "integer" }, example: "not a number" } } } } },
        },
      },
    });
    expect((await patch(body)).status).toBe(200);
    expect(await errorsOf({ "api.yaml": resource(body) })).toEqual([]);
  });
});
