/**
 * Two processes opening a state that does not exist yet, at the same moment (two replicas, or
 * two applies, on a fresh machine): both open it, exactly one takes the lock, neither fails.
 * SQLite answers the WAL switch with SQLITE_BUSY at once while the other process makes it;
 * before the open retried that, about one race in six ended in STATE_IO (24 races here: the old code fails this test all but about 1% of the time).
 */
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tsxLoader } from "../helpers/cli.js";
import { projectRoot } from "../helpers/temp-repo.js";

const opener = `
import { SqliteStateBackend } from ${JSON.stringify(path.join(projectRoot, "src/record/sqlite/sqlite-backend.ts"))};
// both racers start at the same instant, whatever their start-up took
while (Date.now() < Number(process.argv[2]));
const b = new SqliteStateBackend(process.argv[1]);
try {
  await b.read();
  const lock = await b.lock("racer " + process.pid);
  await new Promise((r) => setTimeout(r, 200));
  await lock.release();
  console.log("locked");
} catch (e) {
  console.log(e.code + " " + e.message);
}
await b.close();
`;

function open(file: string, startAt: number): Promise<string> {
  const child = spawn(process.execPath, ["--import", tsxLoader, "--input-type=module", "-e", opener, file, String(startAt)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  return new Promise((resolve) => child.on("close", () => resolve(out.trim())));
}

describe("a new SQLite state opened by two processes at once", () => {
  it("never fails either of them: one takes the lock, the other is told it is locked", async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 24; i++) {
      const file = path.join(await mkdtemp(path.join(tmpdir(), "gatesync-open-race-")), "state.db");
      const startAt = Date.now() + 1_500;
      outcomes.push(...(await Promise.all([open(file, startAt), open(file, startAt)])));
    }
    expect(
      outcomes.filter((o) => o !== "locked" && !o.startsWith("STATE_LOCKED")),
      outcomes.join("\n"),
    ).toEqual([]);
    expect(outcomes.filter((o) => o === "locked").length).toBeGreaterThanOrEqual(24);
  }, 120_000);
});
