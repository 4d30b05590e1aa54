/**
 * A daemon's environment keeps its last state snapshot between runs (kept-snapshot-state.ts):
 * forced re-plans of an unchanged revision plan against it without reading the records again —
 * and the run after another writer changed the state (a `gatesync apply` from a laptop, here a
 * second handle on the environment's SQLite file) plans against what that writer left: the
 * resource it changed is updated back to the commit's value on the sandbox.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/run/run-report.js";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import { heldPayload, payloadOf } from "../../src/record/wrappers/lazy-record.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let sandbox: SandboxHandle;
let dir: string;
let daemon: Daemon;
const runs: RunReport[] = [];

const writes = (s: SandboxHandle): number => s.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET").length;

beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo({
    "config/keys.yaml": `${doc("OrgKey", "acme", "keyId: org-acme\nrate: 10")}---\n${doc("OrgKey", "globex", "keyId: org-globex\nrate: 5")}`,
  });
  await writeFile(
    path.join(dir, "gatesync.yaml"),
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
environments:
  staging:
    state: { backend: sqlite, path: ${path.join(dir, "staging.db")} }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0" }
`,
  );
  daemon = await startDaemon({
    config: await loadConfig(path.join(dir, "gatesync.yaml")),
    env: { GW_KEY: testCredentials.gatewayKey },
    logger: silentLogger(),
    listen: "127.0.0.1:0",
    watchConfig: false,
    onRun: (report) => runs.push(report),
  });
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await sandbox.stop();
  await removeTempRepos();
});

/** A forced re-plan (`POST /sync`'s reason) of the environment, and its report. */
async function forcedRun(): Promise<RunReport> {
  const before = runs.length;
  daemon.environments.get("staging")!.trigger("sync");
  await eventually(
    () => runs.length,
    (n) => n > before,
  );
  return runs[runs.length - 1]!;
}

describe("a daemon's kept state", () => {
  it("plans forced re-plans against it, and the run after another writer's change against that change", async () => {
    expect((await daemon.firstRun).result).toBe("applied");
    expect(sandbox.inspect.store.orgKeys.get("org-acme")?.session.rate).toBe(10);
    // two re-plans of nothing changed: the first reads the state the apply left, the second is served it
    for (let i = 0; i < 2; i++) {
      const run = await forcedRun();
      expect(run.result).toBe("applied");
      expect(run.plan?.update).toBe(0);
    }
    const sent = writes(sandbox);

    // another writer: the record says rate 99 was applied, as after a laptop's apply of an edited copy
    const other = new SqliteStateBackend(path.join(dir, "staging.db"));
    const lock = await other.lock("gatesync apply (a laptop)");
    try {
      const record = (await other.read()).resources.get("OrgKey/acme");
      const applied = payloadOf(record!, "applied") as Record<string, unknown>;
      expect(applied.rate).toBe(10);
      await other.write({
        ...record!,
        applied: heldPayload({ ...applied, rate: 99 }),
        appliedHash: "written-by-another-apply",
        updatedAt: new Date().toISOString(),
      });
    } finally {
      await lock.release();
      await other.close();
    }

    const after = await forcedRun();
    expect(after.result).toBe("applied");
    expect(after.plan?.update).toBe(1);
    expect(writes(sandbox) - sent).toBe(1);
    expect(sandbox.inspect.store.orgKeys.get("org-acme")?.session.rate).toBe(10);

    // and what that run wrote is what the next re-plan plans against: nothing to do again
    const again = await forcedRun();
    expect(again.plan?.update).toBe(0);
    expect(writes(sandbox) - sent).toBe(1);
  });
});
