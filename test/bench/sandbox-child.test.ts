/**
 * The benchmark's sandbox runs as its own process (`gatesync sandbox`): started with the
 * bench's fixtures (a batch loopback API whose upstream is the sandbox itself), serving over
 * real HTTP with a small call log, and stopped with SIGTERM, its peak memory measured.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { printedUrls, startSandboxChild } from "../../bench/sandbox-child.js";
import { cliArgs } from "../helpers/cli.js";
import { call } from "../helpers/sandbox.js";

const credentials = { gatewayKey: "child-gw", portalKey: "child-portal", dashboardToken: "child-dash", llmKey: "child-llm" };
const fixtures = {
  apis: [
    { id: "api-0-id", listenPath: "/api-0/", upstream: "http://upstream.invalid" },
    { id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true },
  ],
  keys: [{ key: "loopback-key", apis: ["gw-loopback"] }],
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "gatesync-sandbox-child-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the benchmark's sandbox process", () => {
  it("reads the addresses `gatesync sandbox` prints", () => {
    const out = [
      "sandbox listening on http://127.0.0.1:4000",
      "  gateway   http://127.0.0.1:4000/gw/",
      "  dashboard http://127.0.0.1:4000/api/hooks",
      "  portal    http://127.0.0.1:4000/portal/api",
      "  llm       http://127.0.0.1:4000/llm/api",
      "",
    ].join("\n");
    expect(printedUrls(out)).toEqual({
      base: "http://127.0.0.1:4000",
      gateway: "http://127.0.0.1:4000",
      dashboard: "http://127.0.0.1:4000",
      portal: "http://127.0.0.1:4000/portal/api",
      llm: "http://127.0.0.1:4000/llm/api",
    });
    expect(printedUrls("sandbox listening on http://127.0.0.1:4000\n")).toBeUndefined();
  });

  it("starts with the bench's fixtures, serves batches through its loopback API, keeps a small call log, and stops on SIGTERM", async () => {
    const sandbox = await startSandboxChild({ gatesync: cliArgs(), fixtures, dir, credentials, logSize: 3 });
    let stopped = false;
    try {
      const key = (i: number): { method: string; relative_url: string; headers: Record<string, string>; body: string } => ({
        method: "POST",
        relative_url: `org/keys/k${i}`,
        headers: { "x-gw-authorization": credentials.gatewayKey, authorization: "loopback-key", "content-type": "application/json" },
        body: JSON.stringify({ org_id: `org-${i}`, rate: 10, per: 60 }),
      });
      const batch = await call(`${sandbox.urls.gateway}/gw-batch/gw/batch/`, { method: "POST", body: { requests: [0, 1, 2, 3, 4].map(key) } });
      expect(batch.status).toBe(200);
      expect((batch.body as Array<{ code: number }>).map((r) => r.code)).toEqual([200, 200, 200, 200, 200]);
      const portal = await call(`${sandbox.urls.portal}/catalogues`, { headers: { authorization: credentials.portalKey } });
      expect(portal.status).not.toBe(401);
      const calls = (await call(`${sandbox.urls.base}/__sandbox/calls`)).body as { counts: Record<string, { total: number }>; log: unknown[] };
      // every call counted, only the latest 3 kept
      expect(Object.values(calls.counts).reduce((n, c) => n + c.total, 0)).toBeGreaterThanOrEqual(7);
      expect(calls.log.length).toBeLessThanOrEqual(3);
      const { peakRssMb } = await sandbox.stop();
      stopped = true;
      expect(peakRssMb).toBeGreaterThan(10);
      // gone: signalling it fails
      expect(() => process.kill(sandbox.pid, 0)).toThrow();
    } finally {
      if (!stopped) await sandbox.stop().catch(() => undefined);
    }
  });
});
