import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { holdText, isPlainJson, jsonTextOf } from "../../src/kinds/json-text.js";
import { TextResource } from "../../src/kinds/resource.js";

/** An array with a hole: JSON would give null there. */
function holey(): unknown[] {
  const a: unknown[] = [];
  a[1] = 1;
  return a;
}

describe("values held as JSON text", () => {
  it("takes plain JSON only: what text would not give back stays an object", () => {
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

  it("gives back every plain JSON value exactly (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        fc.pre(isPlainJson(value));
        expect(JSON.parse(jsonTextOf(value)!)).toStrictEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it("reads a fresh copy each time, visible to spreads, JSON and deep equality", () => {
    const holder = holdText<{ spec: { a: number[] } }>({ kind: "K" }, "spec", '{"a":[1,2]}');
    const first = holder.spec;
    first.a.push(3);
    expect(holder.spec).toEqual({ a: [1, 2] });
    expect(holder.spec).not.toBe(holder.spec);
    expect({ ...holder }).toEqual({ kind: "K", spec: { a: [1, 2] } });
    expect(JSON.parse(JSON.stringify(holder))).toEqual({ kind: "K", spec: { a: [1, 2] } });
  });

  it("a resource with its spec as text: each read parses it, JSON shows it", () => {
    const r = new TextResource(
      { apiVersion: "gatesync.dev/v1", kind: "OrgKey", name: "k", labels: {}, annotations: {}, source: { file: "k.yaml", index: 0, line: 1 } },
      '{"keyId":"k","tags":["a"]}',
    );
    (r.spec.tags as string[]).push("mutated");
    expect(r.spec).toEqual({ keyId: "k", tags: ["a"] });
    expect(JSON.parse(JSON.stringify(r))).toEqual({
      apiVersion: "gatesync.dev/v1",
      kind: "OrgKey",
      name: "k",
      labels: {},
      annotations: {},
      source: { file: "k.yaml", index: 0, line: 1 },
      spec: { keyId: "k", tags: ["a"] },
    });
  });
});
