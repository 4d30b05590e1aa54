import { spawn } from "node:child_process";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { cliArgs, spawnCli } from "../helpers/cli.js";
import { call } from "../helpers/sandbox.js";
import { projectRoot } from "../helpers/temp-repo.js";

/** Starts `gatesync demo ARGS`, resolves once its output matches `until`; the caller stops it. */
function startDemo(args: string[], until: RegExp): Promise<{ output: () => string; match: RegExpExecArray; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, cliArgs("demo", ...args), {
    cwd: projectRoot,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${String(until)} in:\n${out}`)), 60_000);
    const check = (b: Buffer): void => {
      out += b.toString();
      const m = until.exec(out);
      if (m === null) return;
      clearTimeout(timer);
      resolve({ output: () => out, match: m, stop: async () => (child.kill("SIGINT"), closed) });
    };
    child.stdout.on("data", check);
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    void closed.then(() => reject(new Error(`exited before ${String(until)}:\n${out}`)));
  });
}

describe("npm start (gatesync demo)", () => {
  it("--once applies the examples and prints no address of a server that has stopped", async () => {
    const r = await spawnCli(["demo", "--once"], { env: { NO_COLOR: "1" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Apply: 17 applied");
    expect(r.stdout).not.toMatch(/status page: http/);
    expect(r.stdout).not.toContain("keeps running");
  }, 90_000);

  it("--serve stops the daemon after the first run and keeps the sandbox up, with the applied objects", async () => {
    const demo = await startDemo(["--serve"], /stays up for exploring at (http:\/\/127\.0\.0\.1:\d+)[\s\S]*Ctrl-C to stop/);
    try {
      expect(demo.output()).toContain("Apply: 17 applied");
      expect(demo.output()).toMatch(/export GW_ADMIN_KEY=demo-[0-9a-f]+/);
      const objects = await call(`${demo.match[1]}/__sandbox/objects`);
      expect(objects.status).toBe(200);
      expect(JSON.stringify(objects.body)).toContain(`"keyId":"acme"`);
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  }, 90_000);

  it("keeps the daemon running and prints its status page's address, on another port when the default one is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as AddressInfo).port;
    try {
      const demo = await startDemo(["--listen", `127.0.0.1:${taken}`], /status page: (http:\/\/127\.0\.0\.1:(\d+))\/ /);
      try {
        expect(Number(demo.match[2])).not.toBe(taken);
        // the address printed is the page a person opens, not the JSON
        const page = await call(`${demo.match[1]}/`);
        expect(page.status).toBe(200);
        expect(page.headers["content-type"]).toContain("text/html");
        expect(page.text).toContain("<h1>Overview</h1>");
        expect((await call(`${demo.match[1]}/readyz`)).status).toBe(200);
        // it warns about none of the secrets it supplies itself: the examples' ${env:…}, the triggers' secret and token
        expect(demo.output()).toContain("(demo values for CHAT_WEBHOOK_TOKEN, CRM_HOOK_TOKEN, PETSTORE_MOBILE_CLIENT_SECRET)");
        expect(demo.output()).not.toMatch(/warning\[|is not set|not set:|"level":40/);
        // and its sync trigger works with the token it supplied: configured, not a 404
        expect((await call(`${demo.match[1]}/sync`, { method: "POST" })).status).toBe(401);
      } finally {
        expect(await demo.stop()).toBe(0);
      }
    } finally {
      blocker.close();
    }
  }, 90_000);
});
