/**
 * Tests compare records (and snapshots) as a user meets them: two recorded payloads are equal
 * when their values are — one held in memory, the other as the text storage gave. A payload is
 * never equal to a plain value: a test that means the value says `read()`.
 */
import { expect } from "vitest";
import { HeldValue } from "../../src/deferred.js";
import { StoredPayload } from "../../src/record/wrappers/lazy-record.js";

const readable = (value: unknown): value is HeldValue<unknown> | StoredPayload<unknown> => value instanceof HeldValue || value instanceof StoredPayload;

expect.addEqualityTesters([
  function samePayloadValue(a: unknown, b: unknown): boolean | undefined {
    if (!readable(a) || !readable(b)) return undefined;
    return this.equals(a.read(), b.read());
  },
]);
