/**
 * Split brain on the SQLite lock: an apply paused (SIGSTOP: a frozen VM, a suspended CI runner)
 * for longer than the lock's stale time loses its lock to a second apply, which applies a newer
 * commit. When the first one resumes it must send nothing more: every call checks the lock first
 * (the fence), not only state writes — it once sent its older updates over the newer commit's,
 * while the state recorded the newer values, so every later plan said "0 changes".
 */
import Database from "better-sqlite3";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { gatesyncChild } from "../helpers/convergence.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/**
 * SIGSTOPs `pid` at a moment it holds no SQLite write transaction. Stopped inside one it would keep
 * SQLite's own file lock, which no stale time can take over (that case is busy-writer.test.ts):
 * probe the write lock, and resume and stop again until it is free.
 */
async function pauseOutsideWrite(pid: number, stateFile: string): Promise<void> {
  const probe = new Database(stateFile, { timeout: 0 });
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      process.kill(pid, "SIGSTOP");
      try {
        probe.prepare("BEGIN IMMEDIATE").run();
        probe.prepare("ROLLBACK").run();
        return;
      } catch (err) {
        if ((err as { code?: unknown }).code !== "SQLITE_BUSY") throw err;
      }
      process.kill(pid, "SIGCONT");
      await sleep(7);
    }
    throw new Error("the apply was never outside a state write");
  } finally {
    probe.close();
  }
}

const keys = (rate: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}.yaml`, doc("OrgKey", `k${i}`, `keyId: k${i}\nrate: ${rate}`)]));

describe("an apply paused past the lock's stale time", () => {
  it("loses the lock to a second apply and, resumed, sends nothing more and says the lock was lost", async () => {
    const h = await harness({ ownCredentials: true, files: keys(100), batch: false, rate: "{ concurrency: 1, requestsPerSecond: 4 }" });
    try {
      const cfg = path.join(h.dir, "gatesync.yaml");
      await writeFile(
        cfg,
        (await readFile(cfg, "utf8")).replace(/state: \{ backend: sqlite, path: ([^}]+) \}/, "state: { backend: sqlite, path: $1, lockStaleAfter: 1s }"),
      );
      await h.apply();
      for (const [name, text] of Object.entries(keys(150))) await writeFile(path.join(h.dir, "config", name), text);
      const puts = (): number => h.sandbox.inspect.calls().log.filter((c) => c.method !== "GET" && !c.internal).length;
      const before = puts();

      const a = gatesyncChild(h, "apply");
      // the first apply has sent two of its six updates: freeze it between calls
      for (let i = 0; i < 3000 && puts() < before + 2; i++) await sleep(5);
      expect(puts() - before, JSON.stringify(a.output())).toBeGreaterThanOrEqual(2);
      const paused = a.pid!;
      await pauseOutsideWrite(paused, path.join(h.dir, "state/state.db"));
      const sentByA = puts() - before;
      try {
        await sleep(1500); // past the 1 s stale time
        for (const [name, text] of Object.entries(keys(200))) await writeFile(path.join(h.dir, "config", name), text);
        const b = gatesyncChild(h, "apply");
        expect(await b.done, JSON.stringify(b.output())).toBe(0);
      } finally {
        process.kill(paused, "SIGCONT");
      }
      const afterB = puts();
      const code = await a.done;
      expect(puts()).toBe(afterB); // not one call from the resumed apply
      expect(code).not.toBe(0);
      expect(a.output().stderr).toContain("STATE_LOCK_LOST");
      expect(a.output().stderr).toContain("no longer holds the state lock");
      for (let i = 0; i < 6; i++) expect(h.sandbox.inspect.store.orgKeys.get(`k${i}`)?.session.rate).toBe(200);
      expect(sentByA).toBeGreaterThanOrEqual(2);
      // the state and the gateway agree: the next plan has nothing to do
      const plan = await h.plan();
      expect(plan.changes.filter((c) => c.action !== "no-op")).toEqual([]);
    } finally {
      await h.stop();
    }
  }, 120_000);
});
