/**
 * A call's deadline is judged after the answers already in the sockets are read: when this
 * process's event loop was busy past a deadline (a long synchronous stretch elsewhere in the
 * apply), an answer that arrived in time is an answer — not an outcome left unknown, which for
 * a create would be an in-doubt resource. A server that does not answer still times out.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { InterfaceClient } from "../../src/apply/http-client.js";

let server: ChildProcess | undefined;
const agent = new Agent();
afterEach(async () => {
  if (server?.exitCode === null) {
    const exited = new Promise((resolve) => server!.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  server = undefined;
});

/**
 * A server in a process of its own (it answers while this one is busy), answering after
 * `delayMs` — or never.
 */
async function serve(delayMs: number | undefined): Promise<InterfaceClient> {
  const answer = delayMs === undefined ? "" : `setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'), ${delayMs});`;
  const script = `const s = require("node:http").createServer((req, res) => { req.resume(); ${answer} }); s.listen(0, "127.0.0.1", () => console.log(s.address().port));`;
  server = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) => server!.stdout!.once("data", (b: Buffer) => resolve(b.toString().trim())));
  return new InterfaceClient({
    name: "gateway",
    baseUrl: `http://127.0.0.1:${port}`,
    auth: { header: "x-gw-authorization", value: "k" },
    dispatcher: agent,
    timeoutMs: 200,
    maxResponseBytes: 1024,
  });
}

/** Holds the event loop for `ms` (as a long synchronous stretch of work would). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("call deadlines", () => {
  it("an answer that arrived while the event loop was busy past the deadline is read, not timed out", async () => {
    const client = await serve(100);
    const call = client.call({ method: "GET", path: "/x" });
    // the request leaves; the loop is then held well past the 200 ms deadline, the answer arriving meanwhile
    await sleep(30);
    // busy after this turn's timers: the next turn runs the expired deadline before it reads sockets
    await new Promise<void>((resolve) => setImmediate(() => resolve(busy(500))));
    expect(await call).toMatchObject({ kind: "answered", status: 200, body: { ok: true } });
  });

  it("a server that does not answer still times out", async () => {
    const client = await serve(undefined);
    const started = performance.now();
    expect(await client.call({ method: "GET", path: "/x" })).toMatchObject({
      kind: "unknown",
      error: expect.stringContaining("no complete answer within retries.timeoutMs (200 ms)") as string,
    });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
