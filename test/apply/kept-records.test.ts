/**
 * The recorder keeps in memory, after a verdict, only the records later steps read (the
 * post-apply checks' kinds): the checks still find their applied record and write their health
 * onto it whole, an orphan is still deactivated from its recorded request, and the state still
 * holds every record in full — over real HTTP against the sandbox, into real SQLite.
 */
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { asJson } from "../helpers/record-json.js";
import { doc, orgKey } from "../helpers/resources.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** An API answering GET /pets with its document's example (mock responses on). */
const api = (name: string, apiId: string, listenPath: string, verify = ""): string =>
  `${doc("ApiDefinition", name, `apiId: ${apiId}\ndefinition:\n  openapi: 3.0.3\n  info: { title: ${name}, version: "1" }\n  servers: [{ url: "http://up.internal:8080" }]\n  paths:\n    /pets:\n      get:\n        responses:\n          "200": { description: ok, content: { application/json: { example: [] } } }`)}  query: { listenPath: ${listenPath}, mockResponse: true }\n${verify}`;

describe("records kept after their verdict", () => {
  it("checks run on the applied record and are written onto it whole; orphans are deactivated from their record; the state holds every record", async () => {
    const files = {
      "a.yaml": api("petstore", "petstore-v1", "/petstore/", "  verify:\n    - path: pets\n      expectStatus: 200\n"),
      "b.yaml": api("orders", "orders-api", "/orders/"),
      "k1.yaml": orgKey({ name: "k1", rate: 1 }),
      "k2.yaml": orgKey({ name: "k2", rate: 2 }),
    };
    h = await harness({ files, configExtra: "orphans: deactivate\n" });
    const first = await h.apply();
    expect(first.summary.failed).toEqual([]);
    expect(first.summary.applied).toHaveLength(4);
    expect(first.summary.health).toEqual([expect.objectContaining({ id: "ApiDefinition/petstore", ok: true })]);
    const after = (await h.state.read()).resources;
    // the health written onto the applied record, which kept its request and the server's answer
    expect(asJson(after.get("ApiDefinition/petstore"))).toMatchObject({
      status: "applied",
      health: { ok: true },
      response: { key: "petstore-v1", status: "ok" },
    });
    expect(after.get("ApiDefinition/petstore")!.applied?.read()).toMatchObject({ definition: { info: { title: "petstore" } } });
    for (const id of ["OrgKey/k1", "OrgKey/k2"])
      expect(asJson(after.get(id))).toMatchObject({ status: "applied", applied: { rate: id === "OrgKey/k1" ? 1 : 2 } });

    expect((await call(`${h.sandbox.urls.base}/orders/pets`)).status).toBe(200);

    // the next apply: an orphan API, one key changed, the checked API unchanged
    await rm(path.join(h.dir, "config/b.yaml"));
    await writeFile(path.join(h.dir, "config/k1.yaml"), orgKey({ name: "k1", rate: 10 }));
    const second = await h.apply();
    expect(second.summary.failed).toEqual([]);
    expect([...second.summary.applied].sort()).toEqual(["ApiDefinition/orders", "OrgKey/k1"]);
    expect(second.summary.health).toEqual([]);
    expect(h.sandbox.inspect.store.apis.get("orders-api")!.extension).toMatchObject({ info: { state: { active: false } } });
    expect(await call(`${h.sandbox.urls.base}/orders/pets`)).toMatchObject({ status: 404 });
    const final = (await h.state.read()).resources;
    expect(asJson(final.get("ApiDefinition/orders"))).toMatchObject({
      status: "applied",
      deactivatedAt: expect.any(String) as string,
      applied: { definition: { info: { title: "orders" } } },
    });
    expect(asJson(final.get("OrgKey/k1"))).toMatchObject({ status: "applied", applied: { rate: 10 } });
    expect(asJson(final.get("ApiDefinition/petstore"))).toMatchObject({ health: { ok: true } });
    expect((await h.plan()).changes.every((c) => c.action === "no-op" || c.action === "orphan")).toBe(true);
  });
});
