/**
 * Graceful handover between lease managers on the real PostgreSQL, at the shipped lease times
 * (5 s lease, renewed every second): a replica that stops gives its leases back and leaves the
 * fleet, and the others take them at once — not a lease's time later, which is what waiting for
 * them to expire (or for the stopped replica to stop counting as live) costs.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { leaseDefaults } from "../../src/config/lease-section.js";
import { FleetLeases } from "../../src/fleet/leases.js";
import { createLogger } from "../../src/logger.js";
import { eventually } from "../helpers/eventually.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";

const environments = ["e1", "e2", "e3", "e4"];
const running: FleetLeases[] = [];

function replica(schema: string, name: string, envs: readonly string[]): FleetLeases {
  const f = new FleetLeases({
    url: pgUrl,
    schema,
    environments: envs,
    logger: createLogger({ level: "silent" }),
    replica: name,
    ttlMs: leaseDefaults.durationMs,
    renewMs: leaseDefaults.renewMs,
  });
  running.push(f);
  f.start();
  return f;
}

afterEach(async () => {
  for (const f of running.splice(0)) await f.stop();
});
afterAll(dropTestSchemas);

/** Stops `leaving` and answers how long until `staying` leads every environment (ms). */
async function handover(leaving: FleetLeases, staying: FleetLeases, envs: readonly string[]): Promise<number> {
  const t0 = performance.now();
  await leaving.stop();
  await eventually(
    () => staying.leading().length,
    (n) => n === envs.length,
    10_000,
  );
  return performance.now() - t0;
}

describe("graceful handover", () => {
  it("a stopping replica's share of several environments is led by the other within 1 s", async () => {
    const schema = testSchema();
    const a = replica(schema, "a", environments);
    const b = replica(schema, "b", environments);
    await eventually(
      () => [a.leading().length, b.leading().length],
      ([x, y]) => x === 2 && y === 2,
      20_000,
    );
    const ms = await handover(a, b, environments);
    console.log(`handover of 2 of 4 environments after stop: ${Math.round(ms)} ms`);
    expect(ms).toBeLessThan(1_000);
  }, 40_000);

  it("the one environment of a config without environments: is led by the standby within 1 s", async () => {
    const schema = testSchema();
    const a = replica(schema, "a", ["default"]);
    await eventually(
      () => a.leads("default"),
      (x) => x,
    );
    const b = replica(schema, "b", ["default"]);
    // b is running its rounds as a standby
    await eventually(
      () => b.holders()?.[0]?.holderName,
      (x) => x === "a",
    );
    const ms = await handover(a, b, ["default"]);
    console.log(`handover of the implicit environment after stop: ${Math.round(ms)} ms`);
    expect(ms).toBeLessThan(1_000);
  }, 40_000);
});
