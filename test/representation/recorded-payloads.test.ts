/**
 * Records read from either backend keep their big payloads (applied, attempted, the last
 * answer, health) as JSON text, each a `Deferred` parsed only by its `read()`: read back exactly
 * as written (also after a migration and a pull/push), serialised as their values, scrubbed by
 * the redaction layer when read, and never parsed by a plan of unchanged resources.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { InternalError } from "../../src/errors.js";
import { payloadsNeeded } from "../../src/plan/decide-change.js";
import { StoredPayload, heldPayload, holdsPayload, payloadFields, unparsedPayloads, unreadPayloads } from "../../src/record/wrappers/lazy-record.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../../src/record/state.js";
import { parsePulled, pulledState } from "../../src/cli/commands/state/transfer.js";
import { redactingState } from "../../src/record/wrappers/redacting-state.js";
import { redactor, registerSecret } from "../../src/secrets/redaction.js";
import { desiredFrom, doc, emptyState, petstore, planFor, recordPlan } from "../helpers/plan.js";
import { dropTestSchemas, postgresBackend } from "../helpers/postgres.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(async () => {
  await dropTestSchemas();
  await removeTempRepos();
});
afterEach(() => redactor.clear());

const sqliteBackend = async (): Promise<StateBackend> => new SqliteStateBackend(path.join(await tempRepo(), ".gatesync", "state.db"));
const backends: Array<[string, () => Promise<StateBackend>, () => Promise<StateBackend>]> = [
  ["sqlite", sqliteBackend, () => Promise.resolve(postgresBackend())],
  ["postgres", () => Promise.resolve(postgresBackend()), sqliteBackend],
];

const full: ResourceRecord = {
  id: "ApiDefinition/petstore",
  kind: "ApiDefinition",
  name: "petstore",
  address: { apiId: "petstore-v1" },
  applied: heldPayload({
    definition: { openapi: "3.0.3", paths: { "/pets": { get: { responses: { 200: { description: "ok" } } } } } },
    listenPath: "/petstore/",
  }),
  appliedHash: "h1",
  attempted: heldPayload({ definition: { openapi: "3.0.3" }, note: "Ünïcode ✓" }),
  response: heldPayload("a string answer"),
  health: heldPayload({ ok: false, checkedAt: "2026-11-21T00:00:00.000Z", results: [{ check: "status", ok: false }] }),
  labels: { team: "pets" },
  status: "applied",
  createdAt: "2026-11-21T00:00:00.000Z",
  updatedAt: "2026-11-21T00:00:00.000Z",
};
const bare: ResourceRecord = {
  id: "OrgKey/k",
  kind: "OrgKey",
  name: "k",
  address: { keyID: "k" },
  status: "failed",
  error: "refused",
  createdAt: "2026-11-21T00:00:00.000Z",
  updatedAt: "2026-11-21T00:00:00.000Z",
};

/** A record as JSON gives it: payloads as their values. */
const plain = (record: ResourceRecord | undefined): unknown => JSON.parse(JSON.stringify(record)) as unknown;

/** The payloads (by record id and field) `StoredPayload.read()` parsed while `run` ran. */
function payloadsParsedBy(state: StateSnapshot, run: () => void): string[] {
  const where = new Map<unknown, string>();
  for (const r of state.resources.values()) for (const f of payloadFields) where.set(r[f], `${r.id} ${f}`);
  const spy = vi.spyOn(StoredPayload.prototype, "read");
  try {
    run();
    return [...new Set(spy.mock.contexts.map((c) => where.get(c) ?? "another payload"))].sort();
  } finally {
    spy.mockRestore();
  }
}

async function writeAll(backend: StateBackend, records: readonly ResourceRecord[]): Promise<void> {
  const lock = await backend.lock("test");
  try {
    await Promise.all(records.map(async (r) => backend.write(r)));
  } finally {
    await lock.release();
  }
}

async function replaceWith(backend: StateBackend, snapshot: StateSnapshot): Promise<void> {
  const lock = await backend.lock("test");
  try {
    await backend.replaceAll(snapshot);
  } finally {
    await lock.release();
  }
}

describe.each(backends)("%s backend: payloads read lazily", (_name, open, openOther) => {
  it("holds every payload as its text, parses it on each read() and only then, and serialises the record as stored", async () => {
    const backend = await open();
    try {
      await writeAll(backend, [full, bare]);
      const snapshot = await backend.read();
      const read = snapshot.resources;
      const r = read.get(full.id)!;
      expect(unparsedPayloads(r)).toEqual([...payloadFields]);
      expect(payloadFields.map((f) => holdsPayload(r, f))).toEqual([true, true, true, true]);
      // holding, spreading and asking whether a payload is there parse nothing
      expect(payloadsParsedBy(snapshot, () => void [{ ...r }, holdsPayload(r, "applied"), unparsedPayloads(r)])).toEqual([]);
      expect(payloadsParsedBy(snapshot, () => void r.applied?.read())).toEqual([`${full.id} applied`]);
      expect(r.applied?.read()).toEqual(full.applied?.read());
      // nothing cached: each read() is a fresh value
      expect(r.applied?.read()).not.toBe(r.applied?.read());
      expect(payloadFields.map((f) => r[f]?.read())).toEqual(payloadFields.map((f) => full[f]?.read()));
      // JSON (the state written back, a pulled state) sees values, never their holders
      expect(plain(r)).toEqual(plain(full));
      expect(JSON.stringify({ ...r })).toBe(JSON.stringify(r));
      expect(JSON.stringify(r)).not.toContain('"text"');
      const b = read.get(bare.id)!;
      expect(payloadFields.map((f) => holdsPayload(b, f))).toEqual([false, false, false, false]);
      expect(b).toEqual(bare);
    } finally {
      await backend.close();
    }
  });

  it("carries every payload through a migration to the other backend and through a pull and a push", async () => {
    const [from, to, back] = [await open(), await openOther(), await open()];
    try {
      await writeAll(from, [full, bare]);
      const source = await from.read();
      await replaceWith(to, source);
      const migrated = await to.read();
      expect(unparsedPayloads(migrated.resources.get(full.id)!)).toEqual([...payloadFields]);
      expect([...migrated.resources.values()].map(plain)).toEqual([full, bare].map(plain));
      // pull writes the whole state as JSON; push reads it back into a state, and a pull of that is the same text
      const pulled = JSON.stringify(pulledState(migrated));
      await replaceWith(back, parsePulled(pulled, "pulled.json"));
      const pushed = await back.read();
      expect([...pushed.resources.values()].map(plain)).toEqual([full, bare].map(plain));
      expect(JSON.stringify(pulledState(pushed))).toBe(pulled);
    } finally {
      await Promise.all([from.close(), to.close(), back.close()]);
    }
  });

  it("scrubs a secret planted in a stored payload when it is parsed, never letting it out", async () => {
    const secret = "planted-secret-value-0123456789";
    const raw = await open();
    const planted: ResourceRecord = {
      ...full,
      applied: heldPayload({ definition: { description: `key ${secret}` } }),
      response: heldPayload({ echo: secret }),
      note: `saw ${secret}`,
    };
    try {
      // written behind the redaction layer's back, as an old version or a hand edit could have
      await writeAll(raw, [planted]);
      registerSecret(secret);
      const read = (await redactingState(raw).read()).resources.get(full.id)!;
      expect(unparsedPayloads(read)).toEqual([...payloadFields]);
      expect(read.note).toBe("saw [redacted]");
      expect(unparsedPayloads(read)).toEqual([...payloadFields]);
      expect(read.applied?.read()).toEqual({ definition: { description: "key [redacted]" } });
      expect(JSON.stringify(read)).not.toContain(secret);
      expect(JSON.stringify(read)).toContain("[redacted]");
      expect(read.attempted?.read()).toEqual(full.attempted?.read());
    } finally {
      await raw.close();
    }
  });
});

describe.each(backends)("%s backend: payloads read only for the records chosen", (_name, open) => {
  it("gives the chooser the records without payloads, reads the chosen ones' in the same snapshot, and refuses to make one up", async () => {
    const backend = await open();
    const other: ResourceRecord = { ...full, id: "ApiDefinition/other", name: "other" };
    try {
      await writeAll(backend, [full, bare, other]);
      const seen: string[][] = [];
      const redacting = redactingState(backend);
      const heads = await redacting.readHeads();
      seen.push([...heads.resources.values()].map((r) => `${r.id} ${unreadPayloads(r).join(",")}`));
      const state = await redacting.readPayloads(heads, new Set([full.id]));
      expect(seen).toEqual([
        ["ApiDefinition/other applied,attempted,response,health", "ApiDefinition/petstore applied,attempted,response,health", "OrgKey/k "],
      ]);
      expect([state.resources.get(full.id), state.resources.get(bare.id)].map(plain)).toEqual([full, bare].map(plain));
      const unread = state.resources.get(other.id)!;
      expect([holdsPayload(unread, "applied"), unread.appliedHash, unread.labels]).toEqual([true, "h1", { team: "pets" }]);
      expect(unreadPayloads(unread)).toEqual([...payloadFields]);
      // holding it is not reading it: only read() (or serialising, which reads) throws
      const copy = { ...unread };
      for (const f of payloadFields) expect(() => copy[f]?.read()).toThrow(InternalError);
      expect(() => unread.applied?.read()).toThrow(/ApiDefinition\/other: its applied was not read/);
      expect(() => JSON.stringify(unread)).toThrow(InternalError);
    } finally {
      await backend.close();
    }
  });

  it("reads a state written between the heads and the payloads again in full, at its new version", async () => {
    const backend = await open();
    const other: ResourceRecord = { ...full, id: "ApiDefinition/other", name: "other" };
    try {
      await writeAll(backend, [full, bare]);
      const heads = await backend.readHeads();
      await writeAll(backend, [other]);
      const state = await backend.readPayloads(heads, new Set([full.id]));
      expect(state.serial).toBe(heads.serial + 1);
      expect([...state.resources.values()].map(plain)).toEqual([other, full, bare].map(plain));
    } finally {
      await backend.close();
    }
  });
});

describe("sqlite backend: a row that is not JSON", () => {
  it("is reported as corrupt, naming the file", async () => {
    const file = path.join(await tempRepo(), ".gatesync", "state.db");
    const backend = new SqliteStateBackend(file);
    try {
      await writeAll(backend, [bare]);
      const db = new Database(file);
      db.pragma("ignore_check_constraints = ON");
      db.prepare("UPDATE resources SET record = ? WHERE id = ?").run('{"id": "OrgKey/k", "applied": {', bare.id);
      db.close();
      await expect(new SqliteStateBackend(file).read()).rejects.toMatchObject({ code: "STATE_CORRUPT", message: expect.stringContaining(file) as string });
    } finally {
      await backend.close();
    }
  });
});

describe("a plan against a state read from storage", () => {
  const files = {
    "api.yaml": petstore,
    "keys.yaml": [1, 2, 3, 4, 5].map((i) => doc("OrgKey", `k${i}`, `keyId: org-${i}\nrate: ${i}`)).join("---\n"),
    "gone.yaml": doc("OrgKey", "gone", "keyId: org-gone\nrate: 1"),
  };

  it("parses no payload of unchanged records, and only the changed record's and the orphan's", async () => {
    const first = await desiredFrom(files);
    const recorded = recordPlan(planFor(first), first.desired, emptyState);
    const backend = await sqliteBackend();
    try {
      await writeAll(backend, [...recorded.resources.values()]);
      const unchanged = await desiredFrom({ ...files, "gone.yaml": "" });
      const state = await backend.read();
      let plan: ReturnType<typeof planFor> | undefined;
      // an orphan's last request is read: it says which server object the record stands for,
      // and whether the repository still declares that object under another name (plan/renames.ts)
      expect(payloadsParsedBy(state, () => (plan = planFor(unchanged, state)))).toEqual(["OrgKey/gone applied"]);
      expect(plan?.summary).toMatchObject({ noop: 6, orphan: 1 });

      const changed = await desiredFrom({ ...files, "keys.yaml": files["keys.yaml"].replace("rate: 3", "rate: 30") });
      const again = await backend.read();
      let update: ReturnType<typeof planFor> | undefined;
      expect(payloadsParsedBy(again, () => (update = planFor(changed, again)))).toEqual(["OrgKey/k3 applied"]);
      expect(update?.changes.find((c) => c.id === "OrgKey/k3")).toMatchObject({
        action: "update",
        fields: [{ path: "rate", before: 3, after: 30 }],
      });
    } finally {
      await backend.close();
    }
  });

  it("reads only the payloads the plan needs, and plans exactly as with every payload read", async () => {
    const first = await desiredFrom(files);
    const recorded = recordPlan(planFor(first), first.desired, emptyState);
    const records = [...recorded.resources.values()].map((r) =>
      r.id === "OrgKey/k2" ? { ...r, status: "failed" as const, error: "500" } : r.id === "OrgKey/k4" ? { ...r, status: "in-doubt" as const } : r,
    );
    const backend = await sqliteBackend();
    try {
      await writeAll(backend, records);
      const next = await desiredFrom({ ...files, "gone.yaml": "", "keys.yaml": files["keys.yaml"].replace("rate: 3", "rate: 30") });
      for (const orphans of ["report", "deactivate"] as const) {
        const heads = await backend.readHeads();
        const lean = await backend.readPayloads(heads, payloadsNeeded(next.desired, heads));
        const read = [...lean.resources.values()].filter((r) => unreadPayloads(r).length === 0).map((r) => r.id);
        expect(read).toEqual(["OrgKey/gone", "OrgKey/k2", "OrgKey/k3", "OrgKey/k4"]);
        expect(planFor(next, lean, { orphans })).toEqual(planFor(next, await backend.read(), { orphans }));
      }
    } finally {
      await backend.close();
    }
  });
});
