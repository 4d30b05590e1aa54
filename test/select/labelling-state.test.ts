/**
 * The apply's writes go through labellingState: each record stamped with its resource's labels
 * (an orphan's keeps its own) and the adoption mark of the record it replaces — written into
 * a real SQLite state, rewritten several times in one run as an apply does (intent, verdict,
 * health).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { ResourceRecord, StateLock, StateSnapshot } from "../../src/record/state.js";
import { labellingState } from "../../src/select/record-labels.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";
import { asJson } from "../helpers/record-json.js";

const t = "2026-11-23T00:00:00.000Z";
const record = (id: string, extra: Partial<ResourceRecord> = {}): ResourceRecord => ({
  id,
  kind: id.split("/")[0]!,
  name: id.split("/")[1]!,
  address: {},
  status: "applied",
  createdAt: t,
  updatedAt: t,
  ...extra,
});

let dir: string;
let backend: SqliteStateBackend;
let lock: StateLock;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "gatesync-labelling-"));
  backend = new SqliteStateBackend(path.join(dir, "state.db"));
  lock = await backend.lock("test");
  await backend.initialise("key");
});
afterEach(async () => {
  await lock.release();
  await backend.close();
  await rm(dir, { recursive: true, force: true });
});

describe("labellingState", () => {
  it("stamps every rewrite of a run: current labels, an orphan's own labels, the adoption mark verified once an update succeeds", async () => {
    const adopted = { at: t, source: "repository" as const, verified: false };
    const before: StateSnapshot = {
      lineage: "l",
      serial: 1,
      hashKey: "key",
      resources: new Map([
        ["OrgKey/adopted", record("OrgKey/adopted", { adopted, labels: { team: "old" } })],
        ["OrgKey/gone", record("OrgKey/gone", { labels: { team: "kept" } })],
      ]),
    };
    const labels = new Map([
      ["OrgKey/adopted", { team: "new" }],
      ["OrgKey/plain", { team: "p" }],
    ]);
    const state = labellingState(backend, labels, before);
    // an intent (in doubt), its verdict, then a health rewrite: as an apply writes them
    await state.write(record("OrgKey/adopted", { status: "in-doubt", adopted }));
    await state.write(record("OrgKey/adopted"));
    await state.write(record("OrgKey/adopted", { health: heldPayload({ ok: true, checkedAt: t, results: [] }) }));
    await state.write(record("OrgKey/plain", { status: "in-doubt" }));
    await state.write(record("OrgKey/plain"));
    // an orphan deactivated: not in the repository, its record keeps the labels it had
    await state.write(record("OrgKey/gone", { deactivatedAt: t }));
    await state.write(record("OrgKey/gone", { deactivatedAt: t, note: "again" }));
    const stored = (await backend.read()).resources;
    expect(asJson(stored.get("OrgKey/adopted"))).toMatchObject({
      labels: { team: "new" },
      adopted: { at: t, source: "repository", verified: true },
      health: { ok: true },
    });
    expect(stored.get("OrgKey/plain")).toMatchObject({ labels: { team: "p" }, status: "applied" });
    expect(stored.get("OrgKey/plain")!.adopted).toBeUndefined();
    expect(stored.get("OrgKey/gone")).toMatchObject({ labels: { team: "kept" }, note: "again" });
  });
});
