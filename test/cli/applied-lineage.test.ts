/**
 * `.gatesync/applied-states.json` (src/cli/common/applied-lineage.ts) stays a file gatesync
 * reads when many environments' applies remember their state at once in one process (the
 * teams' tests apply 40 environments five at a time): every entry kept, none torn.
 */
import { readFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { appliedLineageFile, checkAppliedLineage, rememberAppliedLineage } from "../../src/cli/common/applied-lineage.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("the applied states of a working copy", () => {
  it("keep every environment's entry when 40 applies remember theirs at once", async () => {
    const dir = await tempRepo();
    const names = Array.from({ length: 40 }, (_, i) => `e${i}`);
    await Promise.all(names.map((n) => rememberAppliedLineage(dir, n, { lineage: `lineage-${n}`, state: `schema ${n}`, at: "2026-12-04T00:00:00Z" })));
    const file = JSON.parse(await readFile(appliedLineageFile(dir), "utf8")) as { environments: Record<string, { lineage: string }> };
    expect(Object.keys(file.environments).sort()).toEqual([...names].sort());
    // each is what its apply remembered: its own lineage passes, another's is refused
    for (const n of names) await checkAppliedLineage(dir, n, { lineage: `lineage-${n}`, description: n }, false);
    await expect(checkAppliedLineage(dir, "e1", { lineage: "lineage-e2", description: "e2's" }, false)).rejects.toMatchObject({ code: "STATE_FOREIGN" });
  });
});
