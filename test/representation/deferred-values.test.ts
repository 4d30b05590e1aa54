/**
 * The memory representation itself (docs/dev/memory.md): which values gatesync holds deferred
 * (src/deferred.ts), and the contract of each deferred value — `read()` makes the value again
 * each time (a fresh copy where it parses), serialised it is the value. Behaviour tests
 * elsewhere assert what users see; this suite is where a change of representation shows.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { HeldValue, JsonText } from "../../src/deferred.js";
import { isPlainJson, jsonTextOf } from "../../src/kinds/json-text.js";
import { planDigest } from "../../src/plan/plan.js";
import { fieldChanges, RequestFields } from "../../src/plan/plan-change.js";
import type { PlannedChange } from "../../src/plan/plan-change.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import type { ValidateOptions } from "../../src/validate/repository/repository-validator.js";
import { desiredFrom, doc, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { apiDefinition, orgKey } from "../helpers/resources.js";

afterAll(removeTempRepos);

/** An array with a hole: JSON would give null there. */
function holey(): unknown[] {
  const a: unknown[] = [];
  a[1] = 1;
  return a;
}

describe("JsonText: plain JSON data held as its text", () => {
  it("takes plain JSON only: what text would not give back stays a value", () => {
    expect(isPlainJson({ a: [1, "x", true, null, { b: -1.5 }] })).toBe(true);
    expect(isPlainJson(Object.create(null))).toBe(true);
    for (const value of [
      Number.POSITIVE_INFINITY,
      Number.NaN,
      -0,
      { n: Number.NEGATIVE_INFINITY },
      [undefined],
      { u: undefined },
      new Date(0),
      { d: new Map() },
      1n,
      () => 1,
      Symbol("s"),
      { [Symbol("k")]: 1 },
      holey(),
    ]) {
      expect(isPlainJson(value), String(typeof value)).toBe(false);
      expect(jsonTextOf(value)).toBeUndefined();
    }
  });

  it("reads back every plain JSON value exactly (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        fc.pre(isPlainJson(value));
        expect(new JsonText(jsonTextOf(value)!).read()).toStrictEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it("parses on each read, a fresh copy: changing one read changes nothing held", () => {
    const held = new JsonText<{ a: number[] }>('{"a":[1,2]}');
    const first = held.read();
    first.a.push(3);
    expect(held.read()).toEqual({ a: [1, 2] });
    expect(held.read()).not.toBe(held.read());
    expect(JSON.parse(JSON.stringify({ kind: "K", spec: held }))).toEqual({ kind: "K", spec: { a: [1, 2] } });
  });

  it("HeldValue gives the one value it holds, and serialises as it", () => {
    const value = { a: [1] };
    const held = new HeldValue(value);
    expect(held.read()).toBe(value);
    expect(JSON.stringify({ spec: held })).toBe('{"spec":{"a":[1]}}');
  });
});

describe("what validation holds of a resource's spec", () => {
  const options = (root: string): ValidateOptions => ({ root, secrets: { source: new EnvFileSecretSource({}, root), missing: "error" } });

  it("a one-shot command holds a plain-JSON spec as its text, and a spec text would not give back as the value; the daemon holds values", async () => {
    const files: Record<string, string> = {
      // .inf and -0: JSON text would not give them back
      "odd.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: odd }\nspec:\n  keyId: odd\n  meta_data: { big: .inf, zero: -0.0 }\n",
    };
    for (let i = 0; i < 3; i++) files[`key-${i}.yaml`] = orgKey({ name: `k${i}`, spec: "rate: 5\n" });
    const root = await tempRepo(files);
    const oneShot = RepositoryValidator.oneShot();
    try {
      const compact = new Map((await oneShot.validate(options(root))).resources.map((r) => [r.name, r.spec]));
      expect(compact.get("k0")).toBeInstanceOf(JsonText);
      expect(compact.get("odd")).toBeInstanceOf(HeldValue);
    } finally {
      await oneShot.close();
    }
    const daemon = await new RepositoryValidator({ workers: { threads: 0 } }).validate(options(root));
    expect(daemon.resources.every((r) => r.spec instanceof HeldValue)).toBe(true);
  });
});

describe("what validation holds of an attached document", () => {
  const openapi = (title: string): string => `openapi: 3.0.3\ninfo: { title: ${title}, version: "1" }\npaths: {}\n`;

  it("keeps its JSON text only for a run that prints documents: printed from it, its file is not read again", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 3; i++)
      Object.assign(files, {
        [`apis/a${i}.yaml`]: apiDefinition({ name: `a${i}`, spec: `definitionFile: ../openapi/${`a${i}`}.yaml` }),
        [`openapi/a${i}.yaml`]: openapi(`API ${i}`),
      });
    const root = await tempRepo(files);
    const definitions = async (printsDocuments: boolean): Promise<unknown[]> => {
      const oneShot = RepositoryValidator.oneShot();
      try {
        const result = await oneShot.validate({ root, printsDocuments });
        expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
        return result.resources.map((r) => r.spec.read().definition);
      } finally {
        await oneShot.close();
      }
    };
    const [printed, plain] = [await definitions(true), await definitions(false)];
    expect(printed.map((d) => JSON.stringify(d))).toEqual(plain.map((d) => JSON.stringify(d)));
    // the files go: what the printing run kept still prints, the other run's references read their files
    for (let i = 0; i < 3; i++) await writeFile(path.join(root, `openapi/a${i}.yaml`), openapi("changed"));
    expect(printed.map((d) => (JSON.parse(JSON.stringify(d)) as { info: { title: string } }).info.title)).toEqual(["API 0", "API 1", "API 2"]);
    expect(() => JSON.stringify(plain[0])).toThrow(/changed after it was validated/);
  });

  it("keeps no JSON text for a document its aliases made over twice its file's size: it is read again to print", async () => {
    const aliased = `openapi: 3.0.3\ninfo: { title: aliased, version: "1" }\nx-big: &big ${JSON.stringify("x".repeat(2000))}\nx-copies: [${Array.from({ length: 8 }, () => "*big").join(", ")}]\npaths: {}\n`;
    const root = await tempRepo({ "apis/a.yaml": apiDefinition({ name: "a", spec: `definitionFile: ../openapi/${"a"}.yaml` }), "openapi/a.yaml": aliased });
    const result = await RepositoryValidator.oneShot().validate({ root, printsDocuments: true });
    const definition = result.resources[0]?.spec.read().definition;
    expect(JSON.stringify(definition)).toContain('"title":"aliased"');
    await writeFile(path.join(root, "openapi/a.yaml"), openapi("changed"));
    expect(() => JSON.stringify(definition)).toThrow(/changed after it was validated/);
  });
});

describe("a planned change's fields", () => {
  it("are deferred to the request for a first apply (made again on each read), listed for an update; JSON and the digest see the list", async () => {
    const first = await desiredFrom({ "k.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10\nper: 60") });
    const created = planFor(first).changes[0]!;
    expect(created.action).toBe("create");
    expect(created.fields).toBeInstanceOf(RequestFields);
    expect(fieldChanges(created)).toEqual([
      { path: "per", op: "add", after: 60 },
      { path: "rate", op: "add", after: 10 },
    ]);
    expect(fieldChanges(created)).not.toBe(fieldChanges(created));
    const asJson = JSON.parse(JSON.stringify(created)) as PlannedChange;
    expect(asJson.fields).toEqual(fieldChanges(created));
    expect(planDigest([asJson])).toBe(planDigest([created]));

    const state = recordPlan(planFor(first), first.desired, emptyState);
    const next = await desiredFrom({ "k.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 20\nper: 60") });
    const updated = planFor(next, state).changes[0]!;
    expect(updated.action).toBe("update");
    expect(updated.fields).toEqual([{ path: "rate", op: "change", before: 10, after: 20 }]);
  });
});
