/**
 * The state backend contract, run against both backends: SQLite (a database file in a temp
 * directory) and PostgreSQL (the server on 127.0.0.1:5432; each test in a schema of its own).
 */
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { StateError } from "../../src/errors.js";
import { maxAnswerBytes } from "../../src/record/bound-record.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { ResourceRecord, StateBackend } from "../../src/record/state.js";
import { dropTestSchemas, pgUrl, postgresBackend, sql, testSchema } from "../helpers/postgres.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";

afterAll(async () => {
  await dropTestSchemas();
  await removeTempRepos();
});

const record = (name: string, extra: Partial<ResourceRecord> = {}): ResourceRecord => ({
  id: `OrgKey/${name}`,
  kind: "OrgKey",
  name,
  address: { keyID: name },
  applied: heldPayload({ rate: 1, nested: { list: [1, "two", null] } }),
  status: "applied",
  createdAt: "2026-11-21T00:00:00.000Z",
  updatedAt: "2026-11-21T00:00:00.000Z",
  ...extra,
});

/** Two handles on one state, as two processes would have. */
interface Pair {
  readonly a: StateBackend;
  readonly b: StateBackend;
  /** One more handle on the same state. */
  readonly another: () => StateBackend;
}

const backends: Array<[string, () => Promise<Pair>]> = [
  [
    "sqlite",
    async () => {
      const file = path.join(await tempRepo(), ".gatesync", "state.db");
      return { a: new SqliteStateBackend(file), b: new SqliteStateBackend(file), another: () => new SqliteStateBackend(file) };
    },
  ],
  [
    "postgres",
    () => {
      const schema = testSchema();
      return Promise.resolve({ a: postgresBackend(schema), b: postgresBackend(schema), another: () => postgresBackend(schema) });
    },
  ],
];

describe.each(backends)("%s state backend", (_name, open) => {
  it("starts empty, writes records durably per resource, with a growing serial, read by another handle", async () => {
    const { a, b } = await open();
    try {
      expect(await a.read()).toMatchObject({ lineage: "", serial: 0, hashKey: undefined });
      const lock = await a.lock("contract test");
      await a.initialise("the-key");
      await a.write(record("x"));
      await a.write(record("y", { status: "in-doubt", error: "timeout" }));
      await a.write(record("x", { applied: heldPayload({ rate: 2 }) }));
      const seen = await b.read();
      expect(seen.serial).toBe(4);
      expect(seen.lineage).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen.hashKey).toBe("the-key");
      expect([...seen.resources.keys()].sort()).toEqual(["OrgKey/x", "OrgKey/y"]);
      expect(seen.resources.get("OrgKey/x")?.applied?.read()).toEqual({ rate: 2 });
      expect(seen.resources.get("OrgKey/y")).toEqual(record("y", { status: "in-doubt", error: "timeout" }));
      await a.remove("OrgKey/y");
      await lock.release();
      const after = await b.read();
      expect([...after.resources.keys()]).toEqual(["OrgKey/x"]);
      expect(after.serial).toBe(5);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("lets one writer hold the lock, names it to the other, and frees it on release", async () => {
    const { a, b } = await open();
    try {
      const lock = await a.lock("writer A");
      const err = await b.lock("writer B").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StateError);
      expect(err).toMatchObject({ code: "STATE_LOCKED" });
      expect((err as Error).message).toContain("writer A");
      await expect(b.write(record("z"))).rejects.toThrow(/without holding its lock/);
      await lock.release();
      const second = await b.lock("writer B");
      await b.write(record("z"));
      await second.release();
      expect((await a.read()).resources.has("OrgKey/z")).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("keeps every one of many concurrent writes", async () => {
    const { a, b } = await open();
    try {
      const lock = await a.lock("t");
      await Promise.all(Array.from({ length: 30 }, (_, i) => a.write(record(`k${i}`))));
      await lock.release();
      const seen = await b.read();
      expect(seen.resources.size).toBe(30);
      expect(seen.serial).toBe(30);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("applies concurrent writes and removes in the order they were asked", async () => {
    const { a, b } = await open();
    try {
      const lock = await a.lock("t");
      await a.write(record("gone"));
      // none awaited before the next is asked: the backend may group them, never reorder them
      await Promise.all([
        a.write(record("twice", { applied: heldPayload({ rate: 1 }) })),
        a.write(record("twice", { applied: heldPayload({ rate: 2 }) })),
        a.write(record("back")),
        a.remove("OrgKey/back"),
        a.write(record("back", { applied: heldPayload({ rate: 3 }) })),
        a.remove("OrgKey/gone"),
        a.write(record("last")),
      ]);
      await lock.release();
      const seen = await b.read();
      expect([...seen.resources.keys()].sort()).toEqual(["OrgKey/back", "OrgKey/last", "OrgKey/twice"]);
      expect(seen.resources.get("OrgKey/twice")?.applied?.read()).toEqual({ rate: 2 });
      expect(seen.resources.get("OrgKey/back")?.applied?.read()).toEqual({ rate: 3 });
      expect(seen.serial).toBe(8);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("keeps at most 16 KiB of a server answer, saying how much was cut", async () => {
    const { a, b } = await open();
    try {
      const lock = await a.lock("t");
      const huge = { items: Array.from({ length: 20_000 }, (_, i) => ({ i, text: "é".repeat(20) })) };
      await a.write(record("big", { response: heldPayload(huge), error: "x".repeat(100_000) }));
      await a.write(record("small", { response: heldPayload({ ok: true }) }));
      await lock.release();
      const seen = await b.read();
      const big = seen.resources.get("OrgKey/big")!;
      const cut = big.response?.read() as { truncated: boolean; bytes: number; head: string };
      expect(cut.truncated).toBe(true);
      expect(cut.bytes).toBe(Buffer.byteLength(JSON.stringify(huge)));
      expect(Buffer.byteLength(cut.head)).toBeLessThanOrEqual(maxAnswerBytes);
      expect(JSON.stringify(huge).startsWith(cut.head)).toBe(true);
      expect(Buffer.byteLength(big.error!)).toBeLessThan(maxAnswerBytes + 100);
      expect(big.error).toMatch(/\[cut: \d+ more bytes of 100000\]$/);
      expect(seen.resources.get("OrgKey/small")?.response?.read()).toEqual({ ok: true });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("takes the lock for exactly one of many handles asking at once", async () => {
    const { a, b, another } = await open();
    const handles = [a, b, another(), another(), another()];
    try {
      await a.read(); // the tables exist before the race
      const results = await Promise.allSettled(handles.map((h, i) => h.lock(`racer ${i}`)));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "STATE_LOCKED" });
    } finally {
      for (const h of handles) await h.close();
    }
  });

  it("replaces everything with a snapshot, lineage and serial included", async () => {
    const { a, b } = await open();
    try {
      const lock = await a.lock("t");
      await a.write(record("old"));
      await a.replaceAll({ lineage: "lineage-from-elsewhere", serial: 42, hashKey: "k2", resources: new Map([["OrgKey/new", record("new")]]) });
      await lock.release();
      const seen = await b.read();
      expect(seen).toMatchObject({ lineage: "lineage-from-elsewhere", serial: 42, hashKey: "k2" });
      expect([...seen.resources.keys()]).toEqual(["OrgKey/new"]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("postgres state backend", () => {
  it("creates its tables once, even when several processes start at the same moment", async () => {
    const schema = testSchema();
    const handles = Array.from({ length: 5 }, () => postgresBackend(schema));
    try {
      await Promise.all(handles.map((h) => h.read()));
      const versions = await sql<{ version: number }>(`SELECT version FROM ${pg.escapeIdentifier(schema)}.schema_migrations`);
      expect(versions.map((v) => v.version)).toEqual([1, 2]);
    } finally {
      for (const h of handles) await h.close();
    }
  });

  it("lets a reader without write rights plan: no DDL once migrated, no lock", async () => {
    const schema = testSchema();
    const owner = postgresBackend(schema);
    const lock = await owner.lock("writer");
    await owner.write(record("r"));
    const role = `gs_reader_${schema.slice(-6)}`;
    await sql(`CREATE ROLE ${role} LOGIN`);
    try {
      await sql(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const reader = new (await import("../../src/record/postgres/postgres-backend.js")).PostgresStateBackend({
        url: pgUrl.replace("postgres@", `${role}@`),
        schema,
      });
      const seen = await reader.read(); // while the writer holds the lock
      expect(seen.resources.has("OrgKey/r")).toBe(true);
      await reader.close();
    } finally {
      await lock.release();
      await owner.close();
      await sql(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schema} FROM ${role}; REVOKE USAGE ON SCHEMA ${schema} FROM ${role}; DROP ROLE ${role}`);
    }
  });

  it("loses the lock with its connection, and never writes after that", async () => {
    const schema = testSchema();
    const a = postgresBackend(schema);
    const b = postgresBackend(schema);
    try {
      await a.lock("doomed writer");
      await a.write(record("before"));
      await sql(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 1 AND classid = hashtext($1)::oid`, [schema]);
      await expect(a.write(record("after"))).rejects.toMatchObject({ code: expect.stringMatching(/^STATE_(IO|LOCK_LOST)$/) as string });
      const lock = await b.lock("successor");
      await lock.release();
      expect([...(await b.read()).resources.keys()]).toEqual(["OrgKey/before"]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("refuses a corrupt row with a clear error", async () => {
    const schema = testSchema();
    const a = postgresBackend(schema);
    try {
      await a.read();
      await sql(`INSERT INTO ${schema}.resources (id, kind, record, serial) VALUES ('OrgKey/bad', 'OrgKey', '{"id":"OrgKey/bad"}', 1)`);
      await expect(a.read()).rejects.toMatchObject({ code: "STATE_CORRUPT", message: expect.stringMatching(/row OrgKey\/bad/) as string });
    } finally {
      await a.close();
    }
  });

  it("says clearly when the database cannot be reached", async () => {
    const a = new (await import("../../src/record/postgres/postgres-backend.js")).PostgresStateBackend({
      url: "postgresql://postgres@127.0.0.1:9/none",
      schema: "gs_unreachable",
    });
    await expect(a.read()).rejects.toMatchObject({
      code: "STATE_IO",
      message: expect.stringMatching(/cannot prepare the state tables.*ECONNREFUSED/) as string,
    });
    await a.close();
  });
});
