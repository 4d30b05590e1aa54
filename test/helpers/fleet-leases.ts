/**
 * Lease managers of a fleet (FleetLeases) in the test process, on the real PostgreSQL: started
 * with short leases, stopped after each test.
 */
import { afterEach } from "vitest";
import { FleetLeases } from "../../src/fleet/leases.js";
import { createLogger } from "../../src/logger.js";
import { pgUrl } from "./postgres.js";

export const fleetEnvironments = ["dev", "eu", "prod", "qa", "staging", "us", "ap"];
const logger = createLogger({ level: "silent" });
const running: FleetLeases[] = [];

afterEach(async () => {
  for (const f of running.splice(0)) await f.stop();
});

/** A started lease manager named `name`; `events` gets +env, -env and reason:env as it acquires, loses and is triggered. */
export function replica(schema: string, name: string, events: string[] = [], envs = fleetEnvironments, times = { ttlMs: 1_500, renewMs: 250 }): FleetLeases {
  const f = new FleetLeases({
    url: pgUrl,
    schema,
    environments: envs,
    logger,
    replica: name,
    ...times,
    onAcquire: (e) => events.push(`+${e}`),
    onLose: (e) => events.push(`-${e}`),
    onTrigger: (es, reason) => events.push(...es.map((e) => `${reason}:${e}`)),
  });
  running.push(f);
  f.start();
  return f;
}

/** Each environment with the replicas that lead it now. */
export function leadersOf(fleet: readonly FleetLeases[], envs = fleetEnvironments): Map<string, string[]> {
  return new Map(envs.map((e) => [e, fleet.filter((f) => f.leads(e)).map((f) => f.name)]));
}
