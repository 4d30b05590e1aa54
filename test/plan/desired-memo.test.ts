import { afterAll, describe, expect, it } from "vitest";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { newDesiredMemo } from "../../src/plan/desired.js";
import { prepareDesired } from "../../src/plan/prepare-desired.js";
import type { Desired } from "../../src/plan/desired.js";
import { outgoingOrThrow } from "../../src/plan/desired.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { doc, petstore } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { writeFile } from "node:fs/promises";
import path from "node:path";

afterAll(removeTempRepos);

describe("prepared resources across runs", () => {
  it("are reused while spec and inputs are unchanged, and prepared again when a secret, a referenced API or the file changes", async () => {
    const dir = await tempRepo({
      "a.yaml": petstore,
      "k.yaml": doc("OrgKey", "k", "keyId: k\nhmac_string: ${env:H}\naccess_rights:\n  p: { apiRef: petstore }"),
      "o.yaml": doc("OrgKey", "o", "keyId: o"),
    });
    const validator = new RepositoryValidator();
    const memo = newDesiredMemo();
    const prepare = async (env: Record<string, string>): Promise<ReturnType<typeof prepareDesired>> => {
      const secrets = new EnvFileSecretSource(env, dir);
      const r = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
      return prepareDesired(r.resources, { secrets, hashKey: "key", appTypeProviders: new Set(), memo });
    };
    const byId = (set: ReturnType<typeof prepareDesired>, id: string): unknown => set.desired.find((d) => d.id === id);
    const first = await prepare({ H: "one" });
    const second = await prepare({ H: "one" });
    for (const id of ["ApiDefinition/petstore", "OrgKey/k", "OrgKey/o"]) expect(byId(second, id)).toBe(byId(first, id));
    const rotated = await prepare({ H: "two" });
    expect(byId(rotated, "OrgKey/k")).not.toBe(byId(first, "OrgKey/k"));
    expect(byId(rotated, "OrgKey/o")).toBe(byId(first, "OrgKey/o"));
    expect(outgoingOrThrow(rotated.outgoing.read("OrgKey/k"))?.body).toMatchObject({ hmac_string: "two" });
    await new Promise((r) => setTimeout(r, 5));
    await writeFile(path.join(dir, "a.yaml"), petstore.replace("apiId: petstore-v1", "apiId: petstore-v2"));
    const moved = await prepare({ H: "two" });
    expect((byId(moved, "OrgKey/k") as Desired).request.readCompare().access_rights).toEqual({
      p: { api_id: "petstore-v2" },
    });
    const fresh = prepareDesired((await new RepositoryValidator().validate({ root: dir })).resources, {
      secrets: new EnvFileSecretSource({ H: "two" }, dir),
      hashKey: "key",
      appTypeProviders: new Set(),
    });
    expect(moved.desired).toEqual(fresh.desired);
  });
});
