/**
 * Whatever answers at the address given as the daemon's (`--daemon`, `--state-url`) — a proxy's
 * error page, a stranger, a daemon gone wrong — `gatesync promote` and a plan against a daemon
 * say so, located, in bounded time and memory; no control character of the answer reaches the
 * terminal, and the token never shows.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askDaemon, unreachableError } from "../../src/cli/common/daemon-client.js";
import { runCli } from "../helpers/cli.js";

const token = "promote-token-0123456789";
let server: Server;
let base: string;
/** What the server answers at each path. */
const answers = new Map<string, (res: ServerResponse) => void>();

/** An answer of `mib` MiB of blanks, written as it goes. */
const blanks = (mib: number) => (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json" });
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  for (let i = 0; i < mib; i++) res.write(chunk);
  res.end();
};

const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const answer = answers.get(req.url ?? "");
    if (answer === undefined) res.writeHead(404).end();
    else answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const promote = (env: string, daemon = base): ReturnType<typeof runCli> => runCli(["promote", env, "--daemon", daemon], { GATESYNC_PROMOTE_TOKEN: token });

describe("answers at the daemon's address that are not the daemon's", () => {
  it("an answer of another shape: said to be no promotion's, with the address to check", async () => {
    answers.set("/environments/production/promote", json(200, { ok: true }));
    const r = await promote("production");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the answer of ${base}/environments/production/promote is not a promotion's`);
    expect(r.stderr).toContain("--daemon");
    for (const body of [null, [1, 2], "text", { environment: 1 }]) {
      answers.set("/environments/production/promote", json(200, body));
      expect((await promote("production")).stderr).toContain("is not a promotion's");
    }
  });

  it("a freeze answered with no object (null, a list, a word, a number): the freeze is said done, nothing thrown past the CLI", async () => {
    for (const body of [null, [1, 2], "text", 7]) {
      answers.set("/environments/production/freeze", json(200, body));
      const r = await runCli(["freeze", "production", "--reason", "incident 9", "--daemon", base], { GATESYNC_PROMOTE_TOKEN: token });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^production frozen: it plans but applies and promotes nothing until `gatesync unfreeze production`/);
    }
    answers.set("/environments/production/freeze", json(500, { error: "\u001b[2Jdisk full" }));
    const failed = await runCli(["freeze", "production", "--reason", "incident 9", "--daemon", base], { GATESYNC_PROMOTE_TOKEN: token });
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain("the daemon answered 500:");
    expect(failed.stderr).toContain("disk full");
    expect(failed.stderr).not.toContain("\u001b");
  });

  it("an answer larger than a promotion's plan: dropped past 16 MiB, said", async () => {
    answers.set("/environments/big/promote", blanks(40));
    const r = await promote("big");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/STATE_UNREACHABLE.*its answer is larger than the 16777216 bytes read/);
  });

  it("a refusal whose words hold terminal control sequences: printed without them, and never the token", async () => {
    answers.set("/environments/staging/promote", json(409, { error: `\u001b[2J\u001b]0;owned\u0007refused ${token}`, hint: "\u001b[31mred" }));
    const r = await promote("staging");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refused");
    expect(r.stderr.includes("\u001b") || r.stderr.includes("\u0007")).toBe(false);
    expect(r.stderr).not.toContain(token);
  });

  it("an address that is not http(s): refused before anything is sent", async () => {
    const r = await promote("production", "file:///etc/passwd");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--daemon "file:///etc/passwd" is not an http(s) URL');
  });

  it("a plan against a daemon whose settings answer is endless: dropped past 4 MiB, said", async () => {
    answers.set("/config", blanks(8));
    const r = await runCli(["plan", "--dir", "examples/config", "-c", "examples/gatesync.yaml", "--state-url", base], {
      GATESYNC_STATE_TOKEN: token,
      GW_KEY: "x",
    });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/cannot read the daemon's operator settings from .*\/config: its answer is larger than the 4194304 bytes read/);
  });

  it("an answer that never ends, or trickles: cut off at the whole exchange's deadline, however often a byte comes", async () => {
    const timers: NodeJS.Timeout[] = [];
    answers.set("/silent", () => undefined);
    // a byte every 50 ms: each pause is far within any per-chunk limit, the whole never ends
    answers.set("/trickle", (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      timers.push(setInterval(() => res.write(" "), 50));
    });
    const ask = async (route: string): Promise<{ error: string; ms: number }> => {
      const started = performance.now();
      const error = await askDaemon(new URL(`${base}${route}`), {
        token,
        timeoutMs: 600,
        maxBytes: 1024 * 1024,
        unreachable: (why) => unreachableError(`cannot reach the daemon at ${base}`, why, "check --daemon"),
      }).then(
        () => "answered",
        (err: unknown) => String(err),
      );
      return { error, ms: performance.now() - started };
    };
    try {
      for (const route of ["/trickle", "/silent"]) {
        const { error, ms } = await ask(route);
        expect(error, route).toContain("no whole answer within 0.6 s");
        expect(ms, route).toBeLessThan(5_000);
      }
    } finally {
      for (const t of timers) clearInterval(t);
    }
  });
});
