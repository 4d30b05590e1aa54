import { spawn } from "node:child_process";
import { appendFile, readFile, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StateError } from "../../src/errors.js";
import { FileStateBackend } from "../../src/record/file-backend.js";
import type { ResourceRecord } from "../../src/record/state.js";
import { tsxLoader } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const record = (name: string, extra: Partial<ResourceRecord> = {}): ResourceRecord => ({
  id: `OrgKey/${name}`,
  kind: "OrgKey",
  name,
  address: { keyID: name },
  applied: { rate: 1 },
  status: "applied",
  createdAt: "2026-11-21T00:00:00.000Z",
  updatedAt: "2026-11-21T00:00:00.000Z",
  ...extra,
});

async function stateFile(): Promise<string> {
  return path.join(await tempRepo(), ".gatesync", "state.json");
}

describe("file state backend", () => {
  it("starts empty, and writes per resource with a growing serial, surviving a new process", async () => {
    const file = await stateFile();
    const backend = new FileStateBackend(file);
    expect(await backend.read()).toMatchObject({ lineage: "", serial: 0, hashKey: undefined });
    const lock = await backend.lock("test");
    await backend.initialise("k");
    const init = await backend.read();
    expect(init.lineage).toMatch(/^[0-9a-f-]{36}$/);
    await backend.write(record("a"));
    await backend.write(record("b"));
    const after = await backend.read();
    expect(after.serial).toBe(3);
    expect([...after.resources.keys()]).toEqual(["OrgKey/a", "OrgKey/b"]);
    // readable before compaction (journal), by another instance
    expect((await new FileStateBackend(file).read()).resources.get("OrgKey/b")).toEqual(record("b"));
    await lock.release();
    const saved = JSON.parse(await readFile(file, "utf8")) as { formatVersion: number; serial: number; lineage: string; resources: Record<string, unknown> };
    expect(saved).toMatchObject({ formatVersion: 1, serial: 3, lineage: init.lineage });
    expect(Object.keys(saved.resources)).toEqual(["OrgKey/a", "OrgKey/b"]);
    const reread = await new FileStateBackend(file).read();
    expect(reread.serial).toBe(3);
    expect(reread.hashKey).toBe("k");
  });

  it("keeps the previous version as a backup, and removes records", async () => {
    const file = await stateFile();
    const backend = new FileStateBackend(file);
    let lock = await backend.lock("t");
    await backend.write(record("a"));
    await lock.release();
    lock = await backend.lock("t");
    await backend.remove("OrgKey/a");
    await lock.release();
    expect((await backend.read()).resources.size).toBe(0);
    const backup = JSON.parse(await readFile(`${file}.bak`, "utf8")) as { resources: Record<string, unknown> };
    expect(Object.keys(backup.resources)).toEqual(["OrgKey/a"]);
  });

  it("skips a torn last journal line (the write in flight when a process died)", async () => {
    const file = await stateFile();
    const backend = new FileStateBackend(file);
    await backend.lock("t");
    await backend.write(record("a"));
    await appendFile(`${file}.journal`, '{"serial":2,"op":"write","record":{"id":"OrgKey/b","ki');
    const state = await new FileStateBackend(file).read();
    expect([...state.resources.keys()]).toEqual(["OrgKey/a"]);
    expect(state.serial).toBe(1);
  });

  it("refuses a corrupt state file with a clear error, never starting empty", async () => {
    const file = await stateFile();
    const backend = new FileStateBackend(file);
    const lock = await backend.lock("t");
    await backend.write(record("a"));
    await lock.release();
    const good = await readFile(file, "utf8");
    for (const bad of [good.slice(0, good.length / 2), "[]", JSON.stringify({ formatVersion: 1, lineage: "l", serial: 1, resources: { "OrgKey/a": { id: "OrgKey/a" } } })]) {
      await writeFile(file, bad);
      const err = await backend.read().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StateError);
      expect(err).toMatchObject({ code: "STATE_CORRUPT" });
      expect((err as StateError).message).toContain(file);
      expect((err as StateError).hint).toMatch(/left untouched.*\.bak/);
      expect(await readFile(file, "utf8")).toBe(bad);
    }
    await writeFile(file, good);
    await writeFile(`${file}.journal`, "not json\n{}\n");
    await expect(backend.read()).rejects.toMatchObject({ code: "STATE_CORRUPT" });
  });

  it("refuses a state written by a newer format", async () => {
    const file = await stateFile();
    await new FileStateBackend(file).lock("t").then((l) => l.release());
    await writeFile(file, JSON.stringify({ formatVersion: 99, lineage: "l", serial: 1, resources: {} }));
    await expect(new FileStateBackend(file).read()).rejects.toMatchObject({ code: "STATE_VERSION" });
  });

  it("keeps every one of many concurrent writes, each with its own serial", async () => {
    const file = await stateFile();
    const backend = new FileStateBackend(file, { compactEvery: 7 });
    const lock = await backend.lock("t");
    await Promise.all(Array.from({ length: 40 }, (_, i) => backend.write(record(`k${i}`))));
    expect((await backend.read()).serial).toBe(40);
    await lock.release();
    const reread = await new FileStateBackend(file).read();
    expect(reread.resources.size).toBe(40);
    expect(reread.serial).toBe(40);
  });

  it("in daemon mode, leaves a short journal at release (complete and durable) and folds it in at close", async () => {
    const file = await stateFile();
    const daemon = new FileStateBackend(file, { compactOnRelease: false });
    let lock = await daemon.lock("run 1");
    await daemon.write(record("a"));
    await lock.release();
    lock = await daemon.lock("run 2");
    await daemon.write(record("b"));
    await lock.release();
    await expect(readFile(file, "utf8")).rejects.toThrow(); // not rewritten after each run
    expect([...(await new FileStateBackend(file).read()).resources.keys()]).toEqual(["OrgKey/a", "OrgKey/b"]);
    await daemon.close();
    const saved = JSON.parse(await readFile(file, "utf8")) as { serial: number; resources: Record<string, unknown> };
    expect(saved.serial).toBe(2);
    expect(Object.keys(saved.resources)).toEqual(["OrgKey/a", "OrgKey/b"]);
  });

  it("refuses writes without the lock", async () => {
    await expect(new FileStateBackend(await stateFile()).write(record("a"))).rejects.toThrow(/without holding its lock/);
  });

  it("is locked against another live process, which it names, and taken over once that process is killed", async () => {
    const file = await stateFile();
    const child = spawn(process.execPath, ["--import", tsxLoader, path.join(projectRoot, "test/helpers/hold-lock.ts"), file], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve) => child.stdout.on("data", (b: Buffer) => b.toString().includes("locked") && resolve()));
    const err = await new FileStateBackend(file).lock("me").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "STATE_LOCKED" });
    expect((err as Error).message).toMatch(new RegExp(`locked by test-holder \\(pid ${child.pid}`));
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("close", resolve));
    const lock = await new FileStateBackend(file).lock("me");
    await lock.release();
  });

  it("takes over a lock from another host once it has not been refreshed for staleMs", async () => {
    const file = await stateFile();
    await new FileStateBackend(file).lock("t").then((l) => l.release());
    await writeFile(`${file}.lock`, JSON.stringify({ owner: "elsewhere", pid: 1, host: "another-host", createdAt: "x" }));
    await expect(new FileStateBackend(file, { staleMs: 60_000 }).lock("me")).rejects.toMatchObject({ code: "STATE_LOCKED" });
    const old = new Date(Date.now() - 120_000);
    await utimes(`${file}.lock`, old, old);
    const lock = await new FileStateBackend(file, { staleMs: 60_000 }).lock("me");
    await lock.release();
  });
});
