import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteBudget } from "../../src/apply/batch/byte-budget.js";

describe("ByteBudget", () => {
  it("lets takers in while their bytes fit, first come first served", async () => {
    const budget = new ByteBudget(100);
    const order: string[] = [];
    await budget.take(60);
    const b = budget.take(50).then(() => order.push("b"));
    // c would fit beside a, but b came first: c waits behind it
    const c = budget.take(10).then(() => order.push("c"));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(budget.held).toBe(60);
    budget.give(60);
    await Promise.all([b, c]);
    expect(order).toEqual(["b", "c"]);
    expect(budget.held).toBe(60);
  });

  it("lets a taker larger than the whole budget go once nothing else is held", async () => {
    const budget = new ByteBudget(100);
    await budget.take(30);
    let went = false;
    const big = budget.take(500).then(() => (went = true));
    await Promise.resolve();
    expect(went).toBe(false);
    budget.give(30);
    await big;
    expect(budget.held).toBe(500);
  });

  it("never holds more than its limit while workers of any sizes take and give, and every worker finishes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 40 }),
        async (limit, sizes) => {
          const budget = new ByteBudget(limit);
          let peak = 0;
          let done = 0;
          await Promise.all(
            sizes.map(async (bytes, i) => {
              await budget.take(bytes);
              peak = Math.max(peak, budget.held);
              // only a taker larger than the limit may hold more, and then it holds alone
              if (budget.held > limit) expect(budget.held).toBe(bytes);
              for (let k = 0; k < i % 3; k++) await Promise.resolve();
              budget.give(bytes);
              done++;
            }),
          );
          expect(done).toBe(sizes.length);
          expect(budget.held).toBe(0);
          expect(peak).toBeLessThanOrEqual(Math.max(limit, ...sizes));
        },
      ),
    );
  });
});
