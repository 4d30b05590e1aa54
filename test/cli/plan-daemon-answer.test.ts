/**
 * A merge-request plan reads the daemon's `GET /config` with the state token, then each
 * environment's state. The answer is a server's: it never chooses where the token goes next — the
 * state's address is derived from the environment's name — and one that is not gatesync's is refused.
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { startReceiver } from "../helpers/receiver.js";
import type { Receiver } from "../helpers/receiver.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const token = "plan-daemon-answer-token";
const settings = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets: { gateway: { url: "http://127.0.0.1:1", credentialEnv: GW_KEY } }
environments:
  staging: {}
`;

interface FakeDaemon {
  readonly url: string;
  readonly asked: Array<{ readonly path: string; readonly headers: IncomingHttpHeaders }>;
  readonly server: Server;
}

/** A server answering `/config` with `view`, and nothing else (404). */
async function fakeDaemon(view: unknown): Promise<FakeDaemon> {
  const asked: FakeDaemon["asked"] = [];
  const server = createServer((req, res) => {
    asked.push({ path: req.url ?? "", headers: req.headers });
    res.writeHead(req.url === "/config" ? 200 : 404, { "content-type": "application/json" });
    res.end(req.url === "/config" ? JSON.stringify(view) : "{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked, server };
}

let daemon: FakeDaemon | undefined;
let decoy: Receiver | undefined;
afterEach(async () => {
  await new Promise((resolve) => daemon?.server.close(resolve) ?? resolve(undefined));
  await decoy?.stop();
  await removeTempRepos();
});

async function planAgainst(d: FakeDaemon): Promise<{ code: number; stderr: string }> {
  const dir = await tempRepo({ "gatesync.yaml": settings, "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 5") });
  return runCli(["plan", "-c", path.join(dir, "gatesync.yaml"), "--state-url", d.url], { GW_KEY: "k", GATESYNC_STATE_TOKEN: token });
}

const entry = { name: "staging", orphans: "report", deactivationGuard: { maxShare: 0.5, allow: false } };

describe("a merge-request plan against the daemon's /config", () => {
  it("asks each environment's state at the path its name gives, never where the answer points the token", async () => {
    decoy = await startReceiver();
    const hijack = `@${new URL(decoy.url).host}/steal`;
    daemon = await fakeDaemon({ implicit: false, environments: [{ ...entry, state: hijack }] });
    await planAgainst(daemon);
    expect(decoy.received).toEqual([]);
    expect(daemon.asked.map((a) => a.path)).toEqual(["/config", "/environments/staging/state"]);
    expect(daemon.asked[1]?.headers.authorization).toBe(`Bearer ${token}`);
  });

  it("refuses an answer that is not gatesync's (an environment name that is no name, an unknown orphan policy)", async () => {
    for (const bad of [
      { ...entry, name: "../../steal" },
      { ...entry, orphans: "delete-everything" },
      { ...entry, hold: { kind: "freeze", message: 5 } },
    ]) {
      daemon = await fakeDaemon({ implicit: false, environments: [bad] });
      const r = await planAgainst(daemon);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("the answer is not gatesync's /config");
      expect(daemon.asked.map((a) => a.path)).toEqual(["/config"]);
      await new Promise((resolve) => daemon!.server.close(resolve));
      daemon = undefined;
    }
  });

  it("says a hold the daemon serves stripped of controls, bounded and escaped in the comment", async () => {
    const message = `production frozen: \u001b]8;;http://evil\u0007click\u001b]8;;\u0007 <img src=x> [link](http://evil) ${"x".repeat(10_000)}`;
    daemon = await fakeDaemon({ implicit: false, environments: [entry, { ...entry, name: "production", hold: { kind: "freeze", message } }] });
    const dir = await tempRepo({ "gatesync.yaml": settings, "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 5") });
    const r = await runCli(["plan", "-c", path.join(dir, "gatesync.yaml"), "--state-url", daemon.url, "--format", "markdown"], {
      GW_KEY: "k",
      GATESYNC_STATE_TOKEN: token,
    });
    const held = r.stdout.split("\n").filter((l) => l.includes("**held**"));
    expect(held).toHaveLength(1);
    // eslint-disable-next-line no-control-regex -- no control may reach the comment
    expect(held[0]).not.toMatch(/[\u0000-\u001f]/);
    expect(held[0]).toContain("\\<img src=x\\> \\[link\\](http://evil)");
    expect(held[0]!.length).toBeLessThan(700);
    expect(held[0]).toContain("more characters)");
  });
});
