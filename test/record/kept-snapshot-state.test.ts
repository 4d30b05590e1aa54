/**
 * A daemon's environment serves its last full snapshot again while the stored state's version is
 * unchanged (kept-snapshot-state.ts) — and never once another writer changed it: a second handle
 * on the same SQLite file (a `gatesync apply` from a laptop) or PostgreSQL schema (another
 * replica) writes between two reads, and the next read has what it wrote.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { heldPayload, payloadOf } from "../../src/record/wrappers/lazy-record.js";
import { keptSnapshotState } from "../../src/record/wrappers/kept-snapshot-state.js";
import { redactingState } from "../../src/record/wrappers/redacting-state.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { ResourceRecord, StateBackend } from "../../src/record/state.js";
import { registerSecret } from "../../src/secrets/redaction.js";
import { dropTestSchemas, postgresBackend, testSchema } from "../helpers/postgres.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(async () => {
  await dropTestSchemas();
  await removeTempRepos();
});

const record = (name: string, rate: number, extra: Partial<ResourceRecord> = {}): ResourceRecord => ({
  id: `OrgKey/${name}`,
  kind: "OrgKey",
  name,
  address: { keyID: name },
  applied: heldPayload({ rate }),
  status: "applied",
  createdAt: "2026-11-27T00:00:00.000Z",
  updatedAt: "2026-11-27T00:00:00.000Z",
  ...extra,
});

/** Writes under the lock, as every writer does. */
async function written(state: StateBackend, ...records: ResourceRecord[]): Promise<void> {
  const lock = await state.lock("test");
  try {
    for (const r of records) await state.write(r);
  } finally {
    await lock.release();
  }
}

const rateOf = (r: ResourceRecord | undefined): unknown => (r === undefined ? undefined : payloadOf(r, "applied")?.rate);

const handles: Array<[string, () => Promise<{ readonly mine: StateBackend; readonly other: StateBackend }>]> = [
  [
    "sqlite (a laptop's apply on the same file)",
    async () => {
      const file = path.join(await tempRepo(), ".gatesync", "state.db");
      return { mine: new SqliteStateBackend(file), other: new SqliteStateBackend(file) };
    },
  ],
  [
    "postgres (another replica on the same schema)",
    () => {
      const schema = testSchema();
      return Promise.resolve({ mine: postgresBackend(schema), other: postgresBackend(schema) });
    },
  ],
];

describe.each(handles)("a kept snapshot, %s", (_name, open) => {
  it("is served again while nothing is written, and never after another writer wrote", async () => {
    const { mine, other } = await open();
    const kept = keptSnapshotState(redactingState(mine));
    try {
      await written(other, record("a", 1), record("b", 1));
      const first = await kept.read();
      expect([...first.resources.keys()].sort()).toEqual(["OrgKey/a", "OrgKey/b"]);
      const again = await kept.read();
      expect(kept.servedKept).toBe(1);
      expect(again.serial).toBe(first.serial);
      expect(rateOf(again.resources.get("OrgKey/a"))).toBe(1);

      // another writer changes one record and adds one: the next read has both, at its serial
      await written(other, record("a", 2), record("c", 3));
      const afterOther = await kept.read();
      expect(kept.servedKept).toBe(1);
      expect(afterOther.serial).toBe(first.serial + 2);
      expect(rateOf(afterOther.resources.get("OrgKey/a"))).toBe(2);
      expect(rateOf(afterOther.resources.get("OrgKey/c"))).toBe(3);

      // a removal by another writer, too
      const lock = await other.lock("test");
      await other.remove("OrgKey/b").finally(() => lock.release());
      expect((await kept.read()).resources.has("OrgKey/b")).toBe(false);

      // this handle's own write: the next read is a full one, and has it
      await written(kept, record("d", 4));
      const afterMine = await kept.read();
      expect(rateOf(afterMine.resources.get("OrgKey/d"))).toBe(4);
      expect(kept.servedKept).toBe(1);
      expect((await kept.read()).resources.get("OrgKey/d")).toBe(afterMine.resources.get("OrgKey/d"));
      expect(kept.servedKept).toBe(2);
    } finally {
      await kept.close();
      await other.close();
    }
  });

  it("reads in full when a secret became known since: the kept heads were scrubbed without it", async () => {
    const { mine, other } = await open();
    const kept = keptSnapshotState(redactingState(mine));
    const secret = `kept-snapshot-secret-${Math.random().toString(36).slice(2)}`;
    try {
      await written(other, record("e", 1, { error: `the server said ${secret}` }));
      expect((await kept.read()).resources.get("OrgKey/e")?.error).toContain(secret);
      registerSecret(secret);
      const after = await kept.read();
      expect(kept.servedKept).toBe(0);
      expect(after.resources.get("OrgKey/e")?.error).not.toContain(secret);
    } finally {
      await kept.close();
      await other.close();
    }
  });

  it("does not serve a snapshot to a read that chooses its payloads", async () => {
    const { mine, other } = await open();
    const kept = keptSnapshotState(redactingState(mine));
    try {
      await written(other, record("f", 1), record("g", 2));
      await kept.read();
      const chosen = await kept.readPayloads(await kept.readHeads(), new Set(["OrgKey/f"]));
      expect(kept.servedKept).toBe(0);
      expect(rateOf(chosen.resources.get("OrgKey/f"))).toBe(1);
      expect(() => rateOf(chosen.resources.get("OrgKey/g"))).toThrow(/not read from the state/);
    } finally {
      await kept.close();
      await other.close();
    }
  });
});
