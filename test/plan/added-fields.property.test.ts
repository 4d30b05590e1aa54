/**
 * A first apply lists every field of its request as added: `addedFields` is the field-by-field
 * `diffValues` against nothing, made without a deep comparison per field — the same changes, in
 * the same order, for any request.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addedFields, diffValues } from "../../src/plan/diff.js";
import { marker } from "../../src/secrets/markers.js";

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 100);

const member = fc.oneof(
  fc.jsonValue(),
  fc.constant(undefined),
  fc.string().map((s) => marker("key", s)),
);

describe("addedFields", () => {
  it("is diffValues against nothing, field by field in key order", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), member), (request) => {
        const expected = Object.keys(request)
          .sort()
          .flatMap((k) => diffValues(undefined, request[k], [k]));
        expect(addedFields(request)).toStrictEqual(expected);
      }),
      { numRuns: runs * 5 },
    );
  });
});
