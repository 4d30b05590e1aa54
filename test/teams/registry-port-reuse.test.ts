/**
 * The PostgreSQL ownership registry is one table for every test file, keyed by address, and a
 * stopped sandbox's port goes to a later one (helpers/sandbox.ts). A row left at a port by a test
 * that crashed, or that never stopped its sandbox, must not make a later test's own object "owned
 * elsewhere": CI once blocked `OrgKey/k0` of a fleet test on a row left by a lease test's
 * environment `solo` at the same port.
 */
import { afterAll, describe, expect, it } from "vitest";
import { PostgresOwnership, ownershipSchema } from "../../src/record/ownership/postgres-ownership.js";
import { registryUrl } from "../../src/record/ownership/ownership.js";
import { postgresBackend, sql } from "../helpers/postgres.js";
import { testSandbox } from "../helpers/sandbox.js";

const registry = new PostgresOwnership(postgresBackend(ownershipSchema));
afterAll(() => registry.close());

const rowsAt = async (url: string): Promise<number> => (await sql("SELECT 1 FROM gatesync_ownership.owners WHERE url = $1", [registryUrl(url)])).length;

const leftAt = (url: string): Promise<void> =>
  sql(
    "INSERT INTO gatesync_ownership.owners (interface, url, object, owner, environment, resource, claimed_at) VALUES ('gateway', $1, 'org-key:k0', 'solo', 'solo', 'OrgKey/k0', 'then') ON CONFLICT DO NOTHING",
    [registryUrl(url)],
  ).then(() => undefined);

describe("a test sandbox's addresses in the shared ownership registry", () => {
  it("are cleared when a sandbox takes a port a stopped one left rows at, and when it stops", async () => {
    await registry.rowsOf([]); // the table, as a daemon's first claim makes it
    const first = await testSandbox();
    const port = Number(new URL(first.urls.gateway).port);
    await first.stop();
    // what a crashed test leaves: a row at the port, no sandbox there
    await leftAt(first.urls.gateway);
    expect(await rowsAt(first.urls.gateway)).toBe(1);
    const second = await testSandbox({ port });
    expect(second.urls.gateway).toBe(first.urls.gateway);
    expect(await rowsAt(second.urls.gateway)).toBe(0);
    await leftAt(second.urls.gateway);
    await second.stop();
    expect(await rowsAt(second.urls.gateway)).toBe(0);
  });
});
