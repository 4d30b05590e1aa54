import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { drained } from "../../src/cli.js";
import { writeBatchChars, writeChunks } from "../../src/cli/common/cli-io.js";

describe("stdout written a chunk at a time", () => {
  it("waits while a pipe's queue is full, and not when it is not (or when the pipe is gone)", async () => {
    const pipe = new PassThrough({ highWaterMark: 16 });
    const stream = pipe as unknown as NodeJS.WriteStream;
    await drained(stream); // nothing queued
    pipe.write("x".repeat(64));
    let resolved = false;
    const waiting = drained(stream).then(() => (resolved = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(resolved).toBe(false);
    pipe.read(); // the reader catches up
    await waiting;
    expect(resolved).toBe(true);
    pipe.write("x".repeat(64));
    const gone = drained(stream);
    pipe.destroy();
    await gone; // a closed pipe ends the wait: its output is dropped (see quietOnClosedPipe)
  });

  it("writes every chunk in order, gathered into writes of about 64 KiB, waiting after each for the reader", async () => {
    const written: string[] = [];
    let waits = 0;
    const io = {
      stdout: (t: string) => written.push(t),
      stderr: () => undefined,
      env: {},
      isTty: false,
      drained: async () => {
        waits++;
        await Promise.resolve();
      },
    };
    await writeChunks(io, ["a", "b", "c"]);
    expect(written).toEqual(["abc"]);
    expect(waits).toBe(1);
    // a plan of 1,000 changes of 300 characters: five writes, not a thousand, the text unchanged
    written.length = 0;
    waits = 0;
    const changes = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, "0")}${"x".repeat(296)}`);
    await writeChunks(io, changes);
    expect(written.join("")).toBe(changes.join(""));
    expect(written.length).toBe(Math.ceil((1000 * 300) / writeBatchChars));
    expect(written.slice(0, -1).every((w) => w.length >= writeBatchChars && w.length < writeBatchChars + 300)).toBe(true);
    expect(waits).toBe(written.length);
  });
});
