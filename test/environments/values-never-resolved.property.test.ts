/**
 * Whatever text an environment's value holds — references of every scheme, escapes, `$` runs,
 * anything — validating a repository that puts it in (a resource's field alone, inside a longer
 * string, and in an attached OpenAPI file) and preparing what would be sent never looks a secret
 * up, reports no reference finding at the value, and sends the value's text exactly (issue 43).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { outgoingOrThrow } from "../../src/plan/desired.js";
import { prepareDesired } from "../../src/plan/prepare-desired.js";
import type { SecretLookup, SecretSource } from "../../src/secrets/resolver.js";
import type { SecretRef } from "../../src/secrets/references.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { materialize } from "../../src/kinds/document-ref.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const validator = new RepositoryValidator();
afterAll(async () => {
  await validator.close();
  await removeTempRepos();
});

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 60);

/** A source that answers every reference, and remembers each one asked. */
class RecordingSource implements SecretSource {
  readonly asked: SecretRef[] = [];
  lookup(ref: SecretRef): SecretLookup {
    this.asked.push(ref);
    return { ok: true, value: "looked-up-secret-value" };
  }
}

const reference = fc.constantFrom(
  "${env:TOKEN}",
  "${file:token.txt}",
  "${sops:a.yaml#b}",
  "${var:other}",
  "${evn:TOKEN}",
  "$${env:TOKEN}",
  "$$${env:X}",
  "${",
  "$",
  "}",
);
/** Text that is mostly references, escapes and dollars, with anything between. */
const valueText = fc.array(fc.oneof(reference, fc.string({ maxLength: 4 })), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(""));

const openapi = `openapi: 3.0.3
info: { title: "t \${var:label}", description: "\${var:label}", version: "1" }
servers: [{ url: "http://petstore.internal" }]
paths: {}
x-gw-api-gateway: { info: { name: P, state: { active: true } }, upstream: { url: "http://petstore.internal" }, server: { listenPath: { value: /p/ } } }
`;

describe("values are never resolved", () => {
  it("sends a value's text exactly, wherever it is put in, with no secret looked up", async () => {
    const dir = await tempRepo({
      "key.yaml": doc("OrgKey", "k", "keyId: k\nalias: ${var:label}\nmeta_data: { inside: 'a ${var:label} b' }"),
      "api.yaml": doc("ApiDefinition", "p", "apiId: p\nquery: { listenPath: /p/ }\ndefinitionFile: openapi.yaml"),
      "openapi.yaml": openapi,
    });
    await writeFile(path.join(dir, "other.yaml"), "");
    await fc.assert(
      fc.asyncProperty(valueText, async (label) => {
        const source = new RecordingSource();
        const result = await validator.validate({
          root: dir,
          secrets: { source, missing: "error" },
          values: { environment: "default", values: { label, other: "never-put-in-again" } },
        });
        expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
        const set = prepareDesired(result.resources, { secrets: source, hashKey: "key", appTypeProviders: new Set() });
        const key = outgoingOrThrow(set.outgoing.read("OrgKey/k"))!.body as { alias: unknown; meta_data: { inside: unknown } };
        expect(key.alias).toBe(label);
        expect(key.meta_data.inside).toBe(`a ${label} b`);
        // the body of an ApiDefinition is its OpenAPI document
        const info = (materialize(outgoingOrThrow(set.outgoing.read("ApiDefinition/p"))!.body) as { info: { title: unknown; description: unknown } }).info;
        expect(info).toMatchObject({ title: `t ${label}`, description: label });
        expect(source.asked).toEqual([]);
      }),
      { numRuns: runs },
    );
  });
});
