/**
 * `gatesync history` finds an environment's state the way the state commands do (`--env NAME`,
 * required with several environments) and prints only that environment's runs; a state that
 * was never written has none, and says so (and is not created).
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import type { RunRecord } from "../../src/daemon/history/run-record.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { runCli } from "../helpers/cli.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const at = "2026-11-27T10:00:00.000Z";
const run: RunRecord = {
  kind: "run",
  trigger: "webhook",
  outcome: "partial",
  revision: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
  commit: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
  author: "Grace Hopper",
  subject: "add the storefront product",
  counts: { applied: 2, failed: 1, inDoubt: 0, blocked: 0, skipped: 0, changes: 3, calls: 3 },
  durationMs: 840,
  startedAt: at,
  finishedAt: at,
  replica: "gw-1:4242",
  synced: false,
  report: { reason: "webhook", startedAt: at, finishedAt: at, durationMs: 840, result: "partial", error: "ApiProduct/shop: 500 from the portal" },
  changes: [{ id: "ApiProduct/shop", action: "create" }],
};

describe("gatesync history", () => {
  it("prints the runs of the environment --env names, as text and as JSON; refuses to guess with several", async () => {
    const dir = await tempRepo({ "config/.keep": "" });
    const config = path.join(dir, "gatesync.yaml");
    await writeFile(
      config,
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
state: { backend: sqlite, path: ./state.db }
history: { keep: 10, maxAge: 3650d }
environments:
  staging: { targets: { gateway: { url: "http://127.0.0.1:1", credentialEnv: GW } } }
  production: { targets: { gateway: { url: "http://127.0.0.1:1", credentialEnv: GW } } }
`,
    );
    const staging = new SqliteStateBackend(path.join(dir, "state.staging.db"));
    await staging.appendHistory({ record: run }, defaultHistoryBound);
    await staging.close();

    const text = await runCli(["history", "-c", config, "--env", "staging"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      `#1 ${at} partial      webhook · a1b2c3d4e5f6 · 2 applied, 1 failed, 0 in doubt, 0 blocked, 3 calls · 840 ms · on gw-1:4242\n` +
        "    add the storefront product — Grace Hopper\n" +
        "    error: ApiProduct/shop: 500 from the portal\n",
    );
    const json = JSON.parse((await runCli(["history", "-c", config, "--env", "staging", "--format", "json"])).stdout) as { runs: unknown[] };
    expect(json.runs).toEqual([
      expect.objectContaining({ seq: 1, outcome: "partial", author: "Grace Hopper", subject: "add the storefront product", replica: "gw-1:4242", repeats: 0 }),
    ]);
    expect((json.runs[0] as Record<string, unknown>).report).toBeUndefined();

    const other = await runCli(["history", "-c", config, "--env", "production"]);
    expect(other.stdout).toMatch(/^no run recorded in sqlite \S+state\.production\.db yet\n$/);
    // reading creates nothing
    expect(existsSync(path.join(dir, "state.production.db"))).toBe(false);
    const unnamed = await runCli(["history", "-c", config]);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain("gatesync.yaml has 2 environments (staging, production): history works on one at a time");
    expect((await runCli(["history", "-c", config, "--env", "staging", "--limit", "0"])).code).not.toBe(0);
  });
});
