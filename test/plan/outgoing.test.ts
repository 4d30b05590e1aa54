import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { JsonText } from "../../src/deferred.js";
import { prepareDesired } from "../../src/plan/prepare-desired.js";
import { outgoingOrThrow } from "../../src/plan/desired.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { SecretResolver } from "../../src/secrets/resolver.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("the bodies an apply sends", () => {
  it("carry a spec held as text as written when it has no `${`, and `$${` as a literal `${` when it has", async () => {
    const dir = await tempRepo({
      "plain.yaml": doc("OrgKey", "plain", "keyId: plain\nalias: 'costs $5 {per} call'"),
      "literal.yaml": doc("OrgKey", "literal", "keyId: literal\nalias: 'see $${env:NOT_A_SECRET} in the docs'"),
    });
    const secrets = new SecretResolver(new EnvFileSecretSource({ NOT_A_SECRET: "never-this-value" }, dir));
    const validator = RepositoryValidator.oneShot();
    const { resources } = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
    await validator.close();
    // both specs held as JSON text: the text is scanned, the walk taken only where `${` appears
    expect(resources.map((r) => r.spec instanceof JsonText)).toEqual([true, true]);
    const set = prepareDesired(resources, { secrets, hashKey: "key", appTypeProviders: new Set() });
    const alias = (id: string): unknown => (outgoingOrThrow(set.outgoing.read(id))!.body as { alias?: unknown }).alias;
    expect(alias("OrgKey/plain")).toBe("costs $5 {per} call");
    expect(alias("OrgKey/literal")).toBe("see ${env:NOT_A_SECRET} in the docs");
  });

  it("are made when read, with their secrets resolved once for the run; a document changed after the plan is refused with SOURCE_CHANGED", async () => {
    const dir = await tempRepo({
      "a.yaml": doc("ApiDefinition", "petstore", "apiId: petstore-v1\ndefinitionFile: oas/petstore.yaml\nquery: { listenPath: /petstore/ }"),
      "oas/petstore.yaml": "openapi: 3.0.0\ninfo: { title: first, version: '1' }\npaths: {}\n",
      "k.yaml": doc("OrgKey", "k", "keyId: k\nhmac_enabled: true\nhmac_string: ${file:hmac}\naccess_rights:\n  p: { apiRef: petstore }"),
      hmac: "first-secret-value-1234\n",
    });
    const secrets = new SecretResolver(new EnvFileSecretSource({}, dir));
    const validator = RepositoryValidator.oneShot();
    const { resources } = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
    await validator.close();
    const set = prepareDesired(resources, { secrets, hashKey: "key", appTypeProviders: new Set() });
    const key = set.desired.find((d) => d.id === "OrgKey/k")!;
    // the plan holds no secret: the compare carries a marker, the body is not kept
    expect(JSON.stringify(key)).not.toContain("first-secret-value-1234");
    const out = outgoingOrThrow(set.outgoing.read("OrgKey/k"))!;
    expect(out.body).toMatchObject({ hmac_string: "first-secret-value-1234", access_rights: { p: { api_id: "petstore-v1" } } });
    expect([...out.secrets]).toEqual(["first-secret-value-1234"]);
    expect(set.outgoing.read("OrgKey/absent")).toBeUndefined();
    // a secret rotated after the plan: the body carries the value planned (never one the plan did not show)
    await writeFile(path.join(dir, "hmac"), "second-secret-value-5678\n");
    expect(outgoingOrThrow(set.outgoing.read("OrgKey/k"))!.body).toMatchObject({ hmac_string: "first-secret-value-1234" });
    // a document changed after the plan: refused with SOURCE_CHANGED when the body is written, nothing is sent
    await writeFile(path.join(dir, "oas/petstore.yaml"), "openapi: 3.0.0\ninfo: { title: second, version: '1' }\npaths: {}\n");
    expect(() => JSON.stringify(outgoingOrThrow(set.outgoing.read("ApiDefinition/petstore"))!.body)).toThrow(
      expect.objectContaining({ code: "SOURCE_CHANGED" }),
    );
  });
});

describe("the compare an apply records", () => {
  it("is the one the body sent was checked against; rebuilt from the resource otherwise, without a lookup", async () => {
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
    const source = new EnvFileSecretSource({}, dir);
    let lookups = 0;
    const secrets = new SecretResolver({ lookup: (ref) => (lookups++, source.lookup(ref)) });
    const validator = RepositoryValidator.oneShot();
    const { resources } = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
    await validator.close();
    const set = prepareDesired(resources, { secrets, hashKey: "key", appTypeProviders: new Set(), compareFrom: "resource" });
    const key = set.find("OrgKey/k")!;
    const planned = key.request.readCompare();
    set.outgoing.read("OrgKey/k");
    await writeFile(path.join(dir, "hmac"), "second-secret-value-5678\n");
    const recorded = key.request.readCompare();
    expect(recorded).toEqual(planned);
    expect(key.request.readCompare()).toBe(recorded);
    // thousands of bodies later it is no longer kept: rebuilt, from the value the run looked up
    for (let i = 0; i < 5000; i++) set.outgoing.read(`OrgKey/k${i}`);
    const rebuilt = key.request.readCompare();
    expect(rebuilt).not.toBe(recorded);
    expect(rebuilt).toEqual(planned);
    expect(lookups).toBe(1);
  });
});

describe("the secrets an answer is redacted of", () => {
  it("are those the body sent held, even when the secret changed after sending; none for a resource not in the set", async () => {
    const dir = await tempRepo({ "k.yaml": doc("OrgKey", "k", "keyId: k\nhmac_enabled: true\nhmac_string: ${file:hmac}"), hmac: "first-secret-value-1234\n" });
    const secrets = new SecretResolver(new EnvFileSecretSource({}, dir));
    const validator = RepositoryValidator.oneShot();
    const { resources } = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
    await validator.close();
    const set = prepareDesired(resources, { secrets, hashKey: "key", appTypeProviders: new Set(), compareFrom: "resource" });
    // not sent yet: made now
    expect([...set.outgoing.secretsOf("OrgKey/k")]).toEqual(["first-secret-value-1234"]);
    set.outgoing.read("OrgKey/k");
    await writeFile(path.join(dir, "hmac"), "second-secret-value-5678\n");
    expect([...set.outgoing.secretsOf("OrgKey/k")]).toEqual(["first-secret-value-1234"]);
    expect(set.outgoing.secretsOf("OrgKey/absent").size).toBe(0);
  });
});
