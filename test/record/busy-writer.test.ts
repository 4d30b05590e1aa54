/**
 * A process stopped in the middle of a SQLite write (SIGSTOP, a frozen VM) keeps SQLite's own file
 * lock: an apply cannot take the state lock, whatever gatesync's stale time says. It must say so —
 * STATE_LOCKED, naming the file and what to do — not "check that the file can be read and written";
 * and following the hint (ending the writer) must let the next apply through.
 */
import Database from "better-sqlite3";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { gatesyncChild } from "../helpers/convergence.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("an apply that meets a writer holding SQLite's lock", () => {
  it("fails with STATE_LOCKED and a hint that, followed, lets the next apply through", async () => {
    const h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 100") } });
    try {
      await h.apply();
      await writeFile(path.join(h.dir, "config/k.yaml"), doc("OrgKey", "k", "keyId: k\nrate: 150"));
      const writer = new Database(path.join(h.dir, "state/state.db"));
      writer.prepare("BEGIN IMMEDIATE").run();
      try {
        const blocked = gatesyncChild(h, "apply");
        expect(await blocked.done).not.toBe(0);
        const { stderr } = blocked.output();
        expect(stderr).toContain("error[STATE_LOCKED]");
        expect(stderr).toContain("another process has been writing the state database");
        expect(stderr).toContain("resume or end it, then run again");
        expect(stderr).not.toContain("check that the file can be read and written");
        expect(h.sandbox.inspect.store.orgKeys.get("k")?.session.rate).toBe(100);
      } finally {
        writer.prepare("ROLLBACK").run(); // the hint: the writer ends
        writer.close();
      }
      const next = gatesyncChild(h, "apply");
      expect(await next.done, JSON.stringify(next.output())).toBe(0);
      expect(h.sandbox.inspect.store.orgKeys.get("k")?.session.rate).toBe(150);
    } finally {
      await h.stop();
    }
  }, 60_000);
});
