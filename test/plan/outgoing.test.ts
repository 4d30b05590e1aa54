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
    const dir = await tempRepo({
      "a.yaml": petstore,
      "k.yaml": doc("OrgKey", "k", "keyId: k\nhmac_enabled: true\nhmac_string: ${file:hmac}\naccess_rights:\n  p: { apiRef: petstore }"),
      hmac: "first-secret-value-1234\n",
    });
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

describe("the compare an apply records", () => {
  it("is the one the body sent was checked against, even when a secret changed after sending; made again from the resource otherwise", async () => {
    // 5,000 keys in ten files (a file holds at most limits.maxDocumentsPerFile, 1,000, documents)
    const many = Object.fromEntries(
      Array.from({ length: 10 }, (_, f) => [
        `many-${f}.yaml`,
        Array.from({ length: 500 }, (_, j) => f * 500 + j)
          .map((i) => doc("OrgKey", `k${i}`, `keyId: k${i}\nrate: ${i}`))
          .join("---\n"),
      ]),
    );
    const dir = await tempRepo({
      "k.yaml": doc("OrgKey", "k", "keyId: k\nhmac_enabled: true\nhmac_string: ${file:hmac}"),
      ...many,
      hmac: "first-secret-value-1234\n",
    });
    const secrets = new EnvFileSecretSource({}, dir);
    const validator = RepositoryValidator.oneShot();
    const { resources } = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
    await validator.close();
    const set = prepareDesired(resources, { secrets, hashKey: "key", appTypeProviders: new Set(), compareFrom: "resource" });
    const key = set.find("OrgKey/k")!;
    const planned = key.request.compare;
    set.outgoing.get("OrgKey/k");
    // the secret changes while the call is in flight: the record still says what was sent
    await writeFile(path.join(dir, "hmac"), "second-secret-value-5678\n");
    const recorded = key.request.compare;
    expect(recorded).toEqual(planned);
    expect(key.request.compare).toBe(recorded);
    // thousands of bodies later it is no longer kept: made again, from the changed secret
    for (let i = 0; i < 5000; i++) set.outgoing.get(`OrgKey/k${i}`);
    const remade = key.request.compare;
    expect(remade).not.toBe(recorded);
    expect(remade.hmac_string).not.toEqual(planned.hmac_string);
    expect(JSON.stringify(remade)).not.toContain("second-secret-value-5678");
  });
});

describe("the secrets an answer is redacted of", () => {
  it("are those the body sent held, even when the secret changed after sending; none for a resource not in the set", async () => {
    const dir = await tempRepo({ "k.yaml": doc("OrgKey", "k", "keyId: k\nhmac_enabled: true\nhmac_string: ${file:hmac}"), hmac: "first-secret-value-1234\n" });
    const secrets = new EnvFileSecretSource({}, dir);
    const validator = RepositoryValidator.oneShot();
    const { resources } = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
    await validator.close();
    const set = prepareDesired(resources, { secrets, hashKey: "key", appTypeProviders: new Set(), compareFrom: "resource" });
    // not sent yet: resolved now
    expect([...set.outgoing.secretsOf("OrgKey/k")]).toEqual(["first-secret-value-1234"]);
    set.outgoing.get("OrgKey/k");
    await writeFile(path.join(dir, "hmac"), "second-secret-value-5678\n");
    expect([...set.outgoing.secretsOf("OrgKey/k")]).toEqual(["first-secret-value-1234"]);
    expect(set.outgoing.secretsOf("OrgKey/absent").size).toBe(0);
  });
});
