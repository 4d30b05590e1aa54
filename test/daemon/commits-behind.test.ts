/**
 * gatesync_commits_behind is counted off the run's path (src/daemon/loop/run-source.ts): the run
 * does not wait for the git process that counts, and a count that arrives after the run applied
 * the head (0) or after a newer count was asked for is dropped — the gauge never goes back to
 * an old answer.
 */
import { describe, expect, it } from "vitest";
import { CommitsBehind } from "../../src/daemon/loop/run-source.js";
import type { Source } from "../../src/source/source.js";

/** A source whose counts answer when the test says. */
function slowCounts(): { source: Source; answer: (n: number) => void; asked: () => number } {
  const pending: Array<(n: number) => void> = [];
  const source = {
    description: "test",
    fetch: () => Promise.reject(new Error("not fetched here")),
    commitsBetween: () => new Promise<number>((resolve) => pending.push(resolve)),
  } as unknown as Source;
  return { source, answer: (n) => pending.shift()!(n), asked: () => pending.length };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** The gauge over a source of slow counts, and what it was set to, in order. */
function gauge(): { counts: ReturnType<typeof slowCounts>; set: number[]; behind: CommitsBehind } {
  const counts = slowCounts();
  const set: number[] = [];
  return {
    counts,
    set,
    behind: new CommitsBehind(
      () => counts.source,
      (n) => set.push(n),
    ),
  };
}

describe("the commits-behind gauge", () => {
  it("is set when the count comes, without the caller waiting for it", async () => {
    const { counts, set, behind } = gauge();
    behind.note("a", "b");
    await settle();
    expect(counts.asked()).toBe(1);
    expect(set).toEqual([]);
    counts.answer(3);
    await settle();
    expect(set).toEqual([3]);
  });

  it("keeps the applied head's 0 when the count of the run before it arrives later", async () => {
    const { counts, set, behind } = gauge();
    behind.note("a", "b");
    await settle();
    behind.applied();
    counts.answer(2);
    await settle();
    expect(set).toEqual([0]);
  });

  it("keeps the newer count when an older one arrives after it, and asks nothing for the head applied or unknown", async () => {
    const { counts, set, behind } = gauge();
    behind.note("a", "b");
    await settle();
    behind.note("a", "c");
    await settle();
    counts.answer(1); // the first, answered last-but-one: dropped
    counts.answer(2);
    await settle();
    expect(set).toEqual([2]);
    behind.note("c", "c");
    behind.note(undefined, "d");
    behind.note("c", undefined);
    await settle();
    expect(counts.asked()).toBe(0);
    // the last noted wins: unknown (no applied commit) counts 1
    expect(set).toEqual([2, 1]);
  });
});
