import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contentHash } from "../../src/kinds/canonical.js";
import { isSensitiveMarker, keyedHash, redact } from "../../src/secrets/markers.js";

describe("content hash", () => {
  it("is equal for equal values whatever their key order, and differs otherwise", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const reordered = JSON.parse(
          JSON.stringify(a, (_k, v: unknown) =>
            v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
          ),
        ) as unknown;
        expect(contentHash(reordered)).toBe(contentHash(a));
        if (JSON.stringify(a) !== JSON.stringify(b) && contentHash(a) === contentHash(b)) {
          // only values that differ in key order may share a hash
          expect(contentHash(JSON.parse(JSON.stringify(a)))).toBe(contentHash(JSON.parse(JSON.stringify(b))));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("gives a large value the same hash whether it was seen before or not", () => {
    const big = { paths: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`/p${i}`, { get: { summary: `operation ${i}` } }])) };
    const first = contentHash({ definition: big, query: {} });
    expect(contentHash({ query: {}, definition: big })).toBe(first);
    expect(contentHash({ query: {}, definition: structuredClone(big) })).toBe(first);
    const changed = structuredClone(big);
    changed.paths["/p7"]!.get.summary = "changed";
    expect(contentHash({ query: {}, definition: changed })).not.toBe(first);
  });
});

describe("redaction", () => {
  it("marks secret fields and strings holding secrets, copying only what it changes", () => {
    const shared = { untouched: { deep: [1, 2, 3] } };
    const value = { secret: "s3cret", header_map: { Authorization: "Bearer tok", X: "plain" }, url: "https://h/?t=tok", shared };
    const out = redact(value, "k", ["secret", "header_map.*"], new Set(["tok"])) as typeof value;
    expect(isSensitiveMarker(out.secret)).toBe(true);
    expect(isSensitiveMarker(out.header_map.Authorization)).toBe(true);
    expect(isSensitiveMarker(out.header_map.X)).toBe(true);
    expect(isSensitiveMarker(out.url)).toBe(true);
    expect(out.shared).toBe(shared);
    expect(value.secret).toBe("s3cret");
    const clean = { a: { b: [1, { c: "x" }] } };
    expect(redact(clean, "k", [], new Set())).toBe(clean);
    expect(redact(clean, "k", ["missing.field"], new Set(["zzz"]))).toBe(clean);
  });
});

describe("keyed hashes of strings", () => {
  const hmac = (key: string, value: string): string => createHmac("sha256", key).update(JSON.stringify(value)).digest("hex").slice(0, 32);

  it("are the HMAC of the value under its own key, however often and in whatever order values and keys come", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("key-a", "key-b", "key-c"), fc.string()), { maxLength: 200 }), (pairs) => {
        // each pair twice: the second is answered from what the first kept
        for (const [key, value] of [...pairs, ...pairs]) expect(keyedHash(key, value)).toBe(hmac(key, value));
      }),
    );
  });

  it("stay right past the number of values kept, and for more keys than are kept", () => {
    for (let i = 0; i < 10_000; i++) expect(keyedHash("bound", `value-${i % 5000}`)).toBe(hmac("bound", `value-${i % 5000}`));
    for (let k = 0; k < 40; k++) expect(keyedHash(`key-${k}`, "same")).toBe(hmac(`key-${k}`, "same"));
    expect(keyedHash("key-1", "same")).not.toBe(keyedHash("key-2", "same"));
  });
});
