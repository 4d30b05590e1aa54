import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { drained } from "../../src/cli.js";
import { writeChunks } from "../../src/cli/cli-io.js";

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

  it("writes every chunk in order, waiting after each for the reader", async () => {
    const written: string[] = [];
    let waits = 0;
    await writeChunks(
      {
        stdout: (t) => written.push(t),
        stderr: () => undefined,
        env: {},
        isTty: false,
        drained: async () => {
          waits++;
          await Promise.resolve();
        },
      },
      ["a", "b", "c"],
    );
    expect(written).toEqual(["a", "b", "c"]);
    expect(waits).toBe(3);
  });
});
