import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { apiDefinition, doc } from "../helpers/resources.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** The upstream every API here is defined with. */
const petstore = { title: "Petstore", server: "http://petstore.internal:8080" };

describe("orphans: deactivate", () => {
  it("deactivates an API whose document has no x-gw-api-gateway extension: its traffic then stops", async () => {
    // the listen path gatesync applied makes the extension it sends complete (test/conformance/orphan-deactivation.test.ts);
    // the only API leaves: everything there is to switch off, which the guard lets through only when allowed
    h = await harness({
      files: { "a.yaml": `${apiDefinition({ name: "petstore", apiId: "petstore-v1", definition: petstore })}  query: { listenPath: /petstore/ }\n` },
      configExtra: "orphans: deactivate\ndeactivationGuard: { allow: true }\n",
    });
    expect((await h.apply()).summary.applied).toEqual(["ApiDefinition/petstore"]);
    const traffic = `${h.sandbox.urls.base}/petstore/pets`;
    expect((await call(traffic)).status).not.toBe(404);
    await rm(path.join(h.dir, "config/a.yaml"));
    await writeFile(path.join(h.dir, "config/k.yaml"), doc("OrgKey", "k", "keyId: k"));
    const { summary, plan } = await h.apply();
    expect(plan.changes.find((c) => c.id === "ApiDefinition/petstore")).toMatchObject({ action: "orphan", deactivate: true });
    expect(summary.failed).toEqual([]);
    expect(summary.applied).toContain("ApiDefinition/petstore");
    expect(h.sandbox.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ info: { id: "petstore-v1", state: { active: false } } });
    expect(await call(traffic)).toMatchObject({ status: 404 });
  });

  it("does not report an API that failed with 404 (it never existed) as staying on the server once removed", async () => {
    h = await harness({
      files: { "a.yaml": apiDefinition({ name: "ghost", apiId: "no-such-api", definition: petstore }) },
      configExtra: "orphans: deactivate\n",
    });
    expect((await h.apply()).summary.failed).toEqual([
      expect.objectContaining({ id: "ApiDefinition/ghost", message: expect.stringContaining("404") as string }),
    ]);
    await rm(path.join(h.dir, "config/a.yaml"));
    await writeFile(path.join(h.dir, "config/k.yaml"), doc("OrgKey", "k", "keyId: k"));
    const before = h.sandbox.inspect.calls().log.length;
    const { plan } = await h.apply();
    const ghost = plan.changes.find((c) => c.id === "ApiDefinition/ghost")!;
    expect(ghost).toMatchObject({ action: "orphan" });
    expect(ghost.deactivate).toBeUndefined();
    expect(ghost.reason).toContain("it was never applied");
    expect(ghost.reason).toContain("nothing of it is on the server");
    expect(ghost.reason).not.toContain("stays on the server");
    expect(ghost.hint).toContain("gatesync state resolve ApiDefinition/ghost --forget");
    expect(
      h.sandbox.inspect
        .calls()
        .log.slice(before)
        .map((c) => c.path),
    ).not.toContain("/gw/apis/oas/no-such-api");
  });
});

describe("verify: checks", () => {
  it("run when a check is added or changed, though the definition did not change, and not again after", async () => {
    const files = {
      "a.yaml": `${apiDefinition({ name: "petstore", apiId: "petstore-v1", definition: petstore })}  query: { listenPath: /petstore/, mockResponse: true }\n`,
    };
    h = await harness({ files });
    expect((await h.apply()).summary.health).toEqual([]);
    await writeFile(path.join(h.dir, "config/a.yaml"), `${files["a.yaml"]}  verify:\n    - path: pets\n      expectStatus: 404\n`);
    const added = await h.apply();
    expect(added.plan.changes[0]!.action).toBe("no-op");
    expect(added.summary.health).toEqual([
      expect.objectContaining({ id: "ApiDefinition/petstore", checks: [expect.objectContaining({ path: "pets", expected: 404 })] }),
    ]);
    expect((await h.apply()).summary.health).toEqual([]);
    await writeFile(path.join(h.dir, "config/a.yaml"), `${files["a.yaml"]}  verify:\n    - path: pets\n      expectStatus: 200\n`);
    expect((await h.apply()).summary.health).toEqual([expect.objectContaining({ checks: [expect.objectContaining({ expected: 200 })] })]);
  });
});
