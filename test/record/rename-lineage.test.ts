/**
 * The rename lineage of a record (issue 54): written by a move, kept by both backends through a
 * read and a rewrite, bounded, and checked where a state comes from outside (a pushed dump):
 * a malformed lineage is a located error, never a plan printing what a file wrote.
 */
import { afterAll, describe, expect, it } from "vitest";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";
import { parsePulled, pulledState } from "../../src/record/pulled-state.js";
import { formerHolders, formerIds, renamedRecord, withoutFormer } from "../../src/record/lineage/rename-lineage.js";
import { maxRenameSteps } from "../../src/record/lineage/rename-step.js";
import type { ResourceRecord } from "../../src/record/state.js";
import { dropTestSchemas } from "../helpers/postgres.js";
import { stateBackends } from "../helpers/state-backends.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(async () => {
  await removeTempRepos();
  await dropTestSchemas();
});

const at = "2026-11-21T10:00:00.000Z";
const record: ResourceRecord = {
  id: "PortalWebhook/orders",
  kind: "PortalWebhook",
  name: "orders",
  address: { webhook_id: "wh-1" },
  serverId: "wh-1",
  applied: heldPayload({ Name: "Orders" }),
  appliedHash: "h",
  status: "applied",
  createdAt: at,
  updatedAt: at,
};

describe("a record's rename lineage", () => {
  it("grows with each move, names the earlier names newest first, and is bounded", () => {
    const once = renamedRecord(record, { id: "PortalWebhook/orders-events", name: "orders-events" }, at, "4f1c2a9e");
    const twice = renamedRecord(once, { id: "PortalWebhook/events", name: "events" }, at);
    expect(twice.renames).toEqual([
      { from: "PortalWebhook/orders", to: "PortalWebhook/orders-events", at, commit: "4f1c2a9e" },
      { from: "PortalWebhook/orders-events", to: "PortalWebhook/events", at },
    ]);
    expect(formerIds(twice)).toEqual(["PortalWebhook/orders-events", "PortalWebhook/orders"]);
    expect([...formerHolders({ lineage: "l", serial: 1, hashKey: undefined, resources: new Map([[twice.id, twice]]) }).keys()]).toEqual([
      "PortalWebhook/orders-events",
      "PortalWebhook/orders",
    ]);
    // back and forth forever: the record keeps the newest moves only
    let r = twice;
    for (let i = 0; i < 200; i++) r = renamedRecord(r, { id: `PortalWebhook/n${i % 3}`, name: `n${i % 3}` }, at, "not a commit id");
    expect(r.renames).toHaveLength(maxRenameSteps);
    expect(r.renames!.every((s) => s.commit === undefined)).toBe(true);
    expect(withoutFormer(twice, "PortalWebhook/orders").renames).toEqual([{ from: "PortalWebhook/orders-events", to: "PortalWebhook/events", at }]);
    expect(withoutFormer(withoutFormer(twice, "PortalWebhook/orders"), "PortalWebhook/orders-events").renames).toBeUndefined();
  });

  it("refuses a pushed state whose lineage is not one gatesync writes, saying where", () => {
    const dump = (renames: unknown): string =>
      JSON.stringify({
        ...pulledState({ lineage: "l", serial: 1, hashKey: undefined, resources: new Map() }),
        resources: [{ ...record, applied: { Name: "Orders" }, renames }],
      });
    expect(() => parsePulled(dump("PortalWebhook/x"), "dump.json")).toThrow("dump.json: resources[0]: record PortalWebhook/orders: its renames are not a list");
    expect(() => parsePulled(dump([{ from: "PortalWebhook/a\u001b[31m", to: "PortalWebhook/orders", at }]), "dump.json")).toThrow(
      "dump.json: resources[0]: record PortalWebhook/orders: renames[0] is not a step {from: Kind/name, to: Kind/name, at: ISO time, commit?: commit id}",
    );
    expect(() => parsePulled(dump([{ from: "PortalWebhook/a", to: "PortalWebhook/orders", at, commit: "$(rm -rf /)" }]), "dump.json")).toThrow(
      "renames[0] is not a step",
    );
    expect(() =>
      parsePulled(dump(Array.from({ length: maxRenameSteps + 1 }, () => ({ from: "PortalWebhook/a", to: "PortalWebhook/orders", at }))), "d"),
    ).toThrow(`it has ${maxRenameSteps + 1} renames (at most ${maxRenameSteps} are kept)`);
    expect(parsePulled(dump([{ from: "PortalWebhook/a", to: "PortalWebhook/orders", at }]), "dump.json").resources.get(record.id)!.renames).toHaveLength(1);
  });
});

describe.each(stateBackends)("the lineage in the %s state", (_name, fresh) => {
  it("is written, read back and kept by a rewrite of the record", async () => {
    const backend = (await fresh())();
    try {
      const lock = await backend.lock("test");
      await backend.initialise("key");
      const moved = renamedRecord(record, { id: "PortalWebhook/orders-events", name: "orders-events" }, at, "4f1c2a9e0b");
      await backend.write(moved);
      const read = (await backend.read()).resources.get(moved.id)!;
      expect(read.renames).toEqual(moved.renames);
      await backend.write({ ...read, updatedAt: "2026-11-22T00:00:00.000Z" });
      expect((await backend.read()).resources.get(moved.id)!.renames).toEqual(moved.renames);
      await lock.release();
    } finally {
      await backend.close();
    }
  });
});
