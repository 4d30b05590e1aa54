/**
 * The status page under hostile load, against a daemon holding a realistic 10,000-resource
 * state and running under the manifest's heap settings: 120 connections that ask for
 * /resources and never read their answer once kept /healthz unanswered and pushed RSS past the
 * manifest's 512 MiB (every GET read the whole state and drew the page anew, and each answer
 * was held until its client read it). Now pages come from one cached snapshot, a client that
 * does not take its answer is cut off, and the pages can ask for a token.
 */
import { readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import type { Socket } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { sandboxTargets, spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { testSandbox } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";

let sandbox: SandboxHandle | undefined;
let daemon: DaemonProcess | undefined;
const sockets: Socket[] = [];
afterAll(async () => {
  for (const s of sockets) s.destroy();
  daemon?.child.kill("SIGKILL");
  await sandbox?.stop();
  await removeTempRepos();
});

const token = "pages-token-for-tests-0123456789";
const auth = { authorization: `Bearer ${token}` };

/** The daemon's resident set, read from /proc (MiB). */
const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

async function timed(url: string, headers: Record<string, string> = {}): Promise<{ status: number; ms: number; bytes: number; etag: string | null }> {
  const t0 = performance.now();
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
  const bytes = (await res.arrayBuffer()).byteLength;
  return { status: res.status, ms: performance.now() - t0, bytes, etag: res.headers.get("etag") };
}

/** 10,000 records as an apply leaves them, written straight into the state. */
async function realisticState(file: string): Promise<void> {
  const state = new SqliteStateBackend(file);
  const lock = await state.lock("test setup");
  const t = "2026-11-24T00:00:00.000Z";
  const writes: Array<Promise<void>> = [];
  for (let i = 0; i < 10_000; i++) {
    const name = `key-${String(i).padStart(5, "0")}`;
    writes.push(
      state.write({
        id: `OrgKey/${name}`,
        kind: "OrgKey",
        name,
        address: { keyID: name },
        serverId: name,
        status: "applied",
        commit: "0123456789abcdef0123456789abcdef01234567",
        applied: heldPayload({
          org_id: "acme",
          rate: 100 + (i % 50),
          per: 60,
          quota_max: 10_000,
          access_rights: { [`api-${i % 97}`]: { api_id: `api-${i % 97}`, versions: ["Default"] } },
          meta_data: { team: `team-${i % 13}`, owner: `owner-${i}@example.com` },
        }),
        createdAt: t,
        updatedAt: t,
      }),
    );
  }
  await Promise.all(writes);
  await lock.release();
  await state.close();
}

async function manifestNodeOptions(): Promise<string> {
  const manifest = await readFile(path.join(projectRoot, "examples/k8s/gatesync.yaml"), "utf8");
  return /name: NODE_OPTIONS, value: "([^"]+)"/.exec(manifest)![1]!;
}

async function manifestProbeTimeoutMs(): Promise<number> {
  const manifest = await readFile(path.join(projectRoot, "examples/k8s/gatesync.yaml"), "utf8");
  return Number(/livenessProbe: \{[^\n]*timeoutSeconds: (\d+)/.exec(manifest)![1]) * 1000;
}

describe("the status page against 120 clients that never read", () => {
  it("keeps /healthz answering and RSS bounded, cuts the slow clients off, and asks for its token", async () => {
    sandbox = await testSandbox();
    const dir = await tempRepo();
    await mkdir(path.join(dir, "config"));
    await writeFile(path.join(dir, "config/k.yaml"), doc("OrgKey", "key-00000", "keyId: key-00000"));
    await realisticState(path.join(dir, "state.db"));
    await writeFile(
      path.join(dir, "gatesync.yaml"),
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
${sandboxTargets(sandbox)}state: { backend: sqlite, path: ./state.db }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", pagesTokenEnv: PAGES_TOKEN }
`,
    );
    daemon = await spawnDaemon(path.join(dir, "gatesync.yaml"), dir, { PAGES_TOKEN: token, NODE_OPTIONS: await manifestNodeOptions() });
    const url = daemon.url;
    const pid = daemon.child.pid!;
    await eventually(
      async () => (await fetch(`${url}/status`, { headers: auth })).json() as Promise<{ lastRun: unknown }>,
      (s) => s.lastRun !== null,
      120_000,
    );

    // the token: asked of the pages and /status, not of the probes
    expect((await timed(`${url}/resources`)).status).toBe(401);
    expect((await timed(`${url}/status`)).status).toBe(401);
    expect((await timed(`${url}/resources`, { authorization: `Basic ${Buffer.from(`me:${token}`).toString("base64")}` })).status).toBe(200);
    expect((await timed(`${url}/healthz`)).status).toBe(200);

    const first = await timed(`${url}/resources`, auth);
    const cached = await timed(`${url}/resources`, auth);
    expect(first.status).toBe(200);
    expect(cached.bytes).toBe(first.bytes);
    expect(first.bytes).toBeGreaterThan(1_000_000);
    const rssBefore = rssMiB(pid);

    // 120 clients ask for the page and never read a byte of it
    const request = `GET /resources HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    let closed = 0;
    for (let i = 0; i < 120; i++) {
      const s = connect(new URL(url).port === "" ? 80 : Number(new URL(url).port), "127.0.0.1");
      s.on("connect", () => {
        s.write(request);
        s.pause();
      });
      s.on("error", () => undefined);
      s.on("close", () => closed++);
      sockets.push(s);
    }
    let rssMost = rssBefore;
    let slowestHealth = 0;
    // what the kubelet would do: the manifest's liveness probe restarts the pod after 3 answers in
    // a row slower than its timeoutSeconds (one slow answer on a loaded machine restarts nothing)
    const probeTimeoutMs = await manifestProbeTimeoutMs();
    let slowInARow = 0;
    let mostSlowInARow = 0;
    const until = Date.now() + 8_000;
    while (Date.now() < until) {
      const h = await timed(`${url}/healthz`);
      expect(h.status).toBe(200);
      slowestHealth = Math.max(slowestHealth, h.ms);
      slowInARow = h.ms > probeTimeoutMs ? slowInARow + 1 : 0;
      mostSlowInARow = Math.max(mostSlowInARow, slowInARow);
      rssMost = Math.max(rssMost, rssMiB(pid));
      await sleep(200);
    }
    // past the 10 s answer deadline (or, for an answer the kernel took whole, the keep-alive
    // timeout) the server has closed every slow client's connection: resumed, each one reads
    // what was buffered and then its end
    await sleep(Math.max(0, 11_000 - (Date.now() - until + 8_000)));
    for (const s of sockets) s.resume();
    await eventually(
      () => closed,
      (n) => n === 120,
      15_000,
    );
    rssMost = Math.max(rssMost, rssMiB(pid));
    const after = await timed(`${url}/resources`, auth).catch((err: unknown) => {
      throw new Error(`${String(err)} exit=${daemon!.child.exitCode} closed=${closed}\n${daemon!.output().slice(-3000)}`);
    });
    process.stdout.write(
      `status page: first GET /resources ${Math.round(first.ms)} ms (${(first.bytes / 1e6).toFixed(1)} MB), cached ${Math.round(cached.ms)} ms; 120 non-reading clients: RSS ${Math.round(rssBefore)} → at most ${Math.round(rssMost)} MiB, slowest /healthz ${Math.round(slowestHealth)} ms\n`,
    );
    expect(mostSlowInARow).toBeLessThan(3);
    expect(rssMost).toBeLessThan(rssBefore + 100);
    expect(rssMost).toBeLessThan(400);
    // the second answer is the first drawing, served from the cache (its ETag), not drawn again
    expect(first.etag).toMatch(/^W\/"page-\d+"$/);
    expect(cached.etag).toBe(first.etag);
    expect(after.status).toBe(200);
    expect(daemon.child.exitCode).toBeNull();
  }, 300_000);
});
