import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareDesired } from "../../src/plan/desired.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { RepositoryValidator } from "../../src/validate/validate-repository.js";
import { doc, petstore } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("the bodies an apply sends", () => {
  it("are resolved when asked for, with their secrets, and refused with SOURCE_CHANGED when a secret changed after the plan", async () => {
    const dir = await tempRepo({ "a.yaml": petstore, "k.yaml": doc("OrgKey", "k", "keyId: k\nhmac_enabled: true\nhmac_string: ${file:hmac}\naccess_rights:\n  p: { apiRef: petstore }"), "hmac": "first-secret-value-1234\n" });
    const secrets = new EnvFileSecretSource({}, dir);
    const validator = RepositoryValidator.oneShot();
    const { resources } = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
    await validator.close();
    const set = prepareDesired(resources, { secrets, hashKey: "key", appTypeProviders: new Set() });
    const key = set.desired.find((d) => d.id === "OrgKey/k")!;
    // the plan holds no secret: the compare carries a marker, the body is not kept
    expect(JSON.stringify(key)).not.toContain("first-secret-value-1234");
    const out = set.outgoing.get("OrgKey/k")!;
    expect(out.body).toMatchObject({ hmac_string: "first-secret-value-1234", access_rights: { p: { api_id: "petstore-v1" } } });
    expect([...out.secrets]).toEqual(["first-secret-value-1234"]);
    expect(set.outgoing.get("OrgKey/absent")).toBeUndefined();
    await writeFile(path.join(dir, "hmac"), "second-secret-value-5678\n");
    expect(() => set.outgoing.get("OrgKey/k")).toThrow(expect.objectContaining({ code: "SOURCE_CHANGED" }));
    // a resource whose inputs did not change is still sent
    expect(set.outgoing.get("ApiDefinition/petstore")?.body).toBeDefined();
  });
});
