/**
 * Issue 30, point 3: `orphans: deactivate` sends what a real gateway accepts. The body of an
 * ApiDefinition's deactivation carries a complete `x-gw-api-gateway` extension, built from what
 * gatesync last applied and the document — checked here against the OpenAPI schema merged with
 * the published extension schema (the copies in test/fixtures/shared) — or, where one cannot be
 * built, the plan refuses with a hint, and following that hint deactivates the API.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { knownKind } from "../../src/kinds/registry.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { doc } from "../helpers/plan.js";
import { call } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos } from "../helpers/temp-repo.js";
import { mergedValidator } from "../helpers/published-schemas.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** The body gatesync's sender builds for a record's deactivation (src/apply/sender.ts calls the same hook). */
async function deactivationBody(id: string): Promise<Record<string, unknown>> {
  const record = (await h!.state.read()).resources.get(id)!;
  return knownKind(record.kind)!.deactivation!.body(record.applied?.read() ?? {}, record.address) as Record<string, unknown>;
}

describe("orphans: deactivate of an ApiDefinition", () => {
  it("sends for the examples' petstore (no extension in its document) a body the merged published schema accepts, and the API stops", async () => {
    // the examples' petstore alone (in the whole examples, other resources refer to it)
    const example = (file: string): Promise<string> => readFile(path.join(projectRoot, "examples/config", file), "utf8");
    const files = {
      "apis/petstore.yaml": await example("apis/petstore.yaml"),
      "openapi/petstore.yaml": await example("openapi/petstore.yaml"),
      "k.yaml": doc("OrgKey", "k", "keyId: k"),
    };
    h = await harness({ files, configExtra: "orphans: deactivate\n", batch: false });
    expect((await h.apply()).summary.failed).toEqual([]);
    const body = await deactivationBody("ApiDefinition/petstore");
    const validate = mergedValidator(String(body.openapi));
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(body["x-gw-api-gateway"]).toMatchObject({
      info: { id: "petstore-v1", name: "Swagger Petstore", state: { active: false } },
      upstream: { url: "http://petstore.internal:8080" },
      server: { listenPath: { value: "/petstore/" } },
    });
    expect((await call(`${h.sandbox.urls.base}/petstore/pets`)).status).not.toBe(404);

    await rm(path.join(h.dir, "config/apis/petstore.yaml"));
    const { summary, plan } = await h.apply();
    const change = plan.changes.find((c) => c.id === "ApiDefinition/petstore")!;
    expect(change).toMatchObject({ action: "orphan", deactivate: true });
    expect(change.notes.join(" ")).toContain("complete x-gw-api-gateway extension");
    expect(summary.failed).toEqual([]);
    expect(h.sandbox.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ info: { name: "Swagger Petstore", state: { active: false } } });
    expect(await call(`${h.sandbox.urls.base}/petstore/pets`)).toMatchObject({ status: 404 });
  });

  it("keeps a document's own extension, switched off, when it has one (the examples' orders)", async () => {
    h = await harness({ configExtra: "orphans: deactivate\n", batch: false });
    await h.apply();
    const body = await deactivationBody("ApiDefinition/orders");
    expect(mergedValidator(String(body.openapi))(body)).toBe(true);
    expect(body["x-gw-api-gateway"]).toMatchObject({
      info: { id: "orders-api", name: "Orders", state: { active: false } },
      server: { listenPath: { value: "/orders/", strip: true } },
    });
  });

  it("refuses at plan time when no complete extension can be built, and following the hint deactivates the API", async () => {
    // no listen path anywhere gatesync knows of: neither a query flag nor an extension
    const definition = `apiVersion: gatesync.dev/v1
kind: ApiDefinition
metadata:
  name: petstore
spec:
  apiId: petstore-v1
  definition:
    openapi: 3.0.3
    info: { title: Petstore, version: "1" }
    servers: [{ url: "http://petstore.internal:8080" }]
    paths: {}
`;
    h = await harness({ files: { "a.yaml": definition, "k.yaml": doc("OrgKey", "k", "keyId: k") }, configExtra: "orphans: deactivate\n", batch: false });
    expect((await h.apply()).summary.failed).toEqual([]);
    await rm(path.join(h.dir, "config/a.yaml"));
    const before = h.sandbox.inspect.calls().log.length;
    const { plan } = await h.apply();
    const change = plan.changes.find((c) => c.id === "ApiDefinition/petstore")!;
    expect(change.deactivate).toBeUndefined();
    expect(change.reason).toContain("not deactivated");
    expect(change.reason).toContain("listen path");
    expect(
      h.sandbox.inspect
        .calls()
        .log.slice(before)
        .map((c) => c.path),
    ).not.toContain("/gw/apis/oas/petstore-v1");

    // the hint: put it back with the extension it gives (its one placeholder filled in), apply, remove it
    const hint = change.hint!;
    const snippet = /x-gw-api-gateway: (\{.*\})/.exec(hint)?.[1];
    expect(snippet, hint).toBeDefined();
    expect(snippet).toContain("<listen path>");
    const back = `${definition}    x-gw-api-gateway: ${snippet!.replace("<listen path>", "/petstore/")}\n`;
    await writeFile(path.join(h.dir, "config/a.yaml"), back);
    const restored = await h.apply();
    expect(restored.summary.failed).toEqual([]);
    expect(h.sandbox.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ info: { id: "petstore-v1", state: { active: false } } });
    expect(await call(`${h.sandbox.urls.base}/petstore/pets`)).toMatchObject({ status: 404 });
    await rm(path.join(h.dir, "config/a.yaml"));
    const gone = await h.apply();
    expect(gone.summary.failed).toEqual([]);
    expect(await readFile(path.join(h.dir, "gatesync.yaml"), "utf8")).toContain("orphans: deactivate");
  });
});
