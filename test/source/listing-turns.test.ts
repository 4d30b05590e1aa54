/**
 * The repository's listing and the digests of moved files ask the file system synchronously
 * (src/load/list-files.ts, kept-verdicts.ts), in batches with the event loop let go between them
 * (src/load/loop-turns.ts): the worst value is one directory holding thousands of files, where
 * the listing must still let a daemon's other work run while it lists.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listResourceFiles } from "../../src/load/list-files.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** Counts turns of the event loop while `work` runs. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = (): void => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work();
  running = false;
  return { value, turns };
}

describe("listing a huge directory", () => {
  it("lists every file of one directory of 2,500 and lets the loop turn while it lists", async () => {
    const dir = await tempRepo();
    for (let i = 0; i < 2500; i++) writeFileSync(path.join(dir, `r${String(i).padStart(4, "0")}.yaml`), "kind: x\n");
    const { value, turns } = await turnsDuring(async () => listResourceFiles({ root: dir, maxFiles: 10_000 }));
    expect(value.files).toHaveLength(2500);
    expect(value.files[2499]!.path).toBe("r2499.yaml");
    // 1,024 entries a turn: the loop ran between the batches, not only once the listing was done
    expect(turns).toBeGreaterThanOrEqual(2);
  });
});
