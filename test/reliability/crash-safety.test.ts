/**
 * Crash safety: `gatesync apply` as a child process against the sandbox, killed with SIGKILL
 * at a seeded-random moment of its run (after a random number of calls reached the sandbox),
 * then restarted until it converges. After every kill: nothing was created twice, and the state
 * matches what the sandbox holds except for resources it reports in doubt. Once the in-doubt
 * ones are resolved the way an operator would (by looking at the server), the final plan is
 * empty and each quota reset happened exactly once.
 *
 *   GATESYNC_CRASH_TRIALS=200 GATESYNC_CRASH_SEED=7 npx vitest run test/reliability/crash-safety.test.ts
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { tmpdir } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { afterAll, describe, expect, it } from "vitest";
import type { ResourceRecord } from "../../src/record/state.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { cliArgs, runCli } from "../helpers/cli.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const trials = Number(process.env.GATESYNC_CRASH_TRIALS ?? 30);
const seed = Number(process.env.GATESYNC_CRASH_SEED ?? 20261121);
/** External calls a complete apply of the examples makes (12 calls + 1 check batch). */
const callsPerApply = 13;

function applyChild(h: Harness): { done: Promise<number | null>; kill: () => void } {
  const child = spawn(process.execPath, cliArgs("apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve"), {
    cwd: h.dir,
    env: { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "silent" },
    stdio: "ignore",
  });
  return { done: new Promise((resolve) => child.on("close", (code) => resolve(code))), kill: () => child.kill("SIGKILL") };
}

const externalCalls = (h: Harness): number => h.sandbox.inspect.calls().log.filter((c) => !c.internal).length;

/** Nothing created twice: every create kind holds at most one object per resource. */
function assertNoDuplicates(h: Harness): void {
  const s = h.sandbox.inspect.store;
  const names = (xs: unknown[], key: (x: Record<string, unknown>) => unknown): unknown[] => xs.map((x) => key(x as Record<string, unknown>));
  const unique = (xs: unknown[]): void => expect(new Set(xs).size, JSON.stringify(xs)).toBe(xs.length);
  unique(names([...s.products.values()], (p) => p.Name));
  unique(names([...s.portalWebhooks.values()], (w) => w.Name));
  unique(names(s.dashboardHooks, (d) => d.name));
  unique(names([...s.llmSettings.values()], (l) => (l.attributes as Record<string, unknown>).model_name));
  expect(s.orgKeys.get("org-acme")?.quotaResets ?? 0).toBeLessThanOrEqual(1);
}

/** Where a created object is in the sandbox, for a state record (undefined: not there). */
function findCreated(h: Harness, r: ResourceRecord): string | undefined {
  const s = h.sandbox.inspect.store;
  const attempted = (r.attempted ?? r.applied ?? {}) as Record<string, unknown>;
  switch (r.kind) {
    case "ApiProduct": {
      const p = [...s.products.values()].find((x) => (r.serverId === undefined ? x.Name === attempted.Name : String(x.ID) === r.serverId));
      return p === undefined ? undefined : String(p.ID);
    }
    case "PortalWebhook": {
      const w = [...s.portalWebhooks.values()].find((x) => (r.serverId === undefined ? x.Name === attempted.Name : x.ID === r.serverId));
      return w === undefined ? undefined : String(w.ID);
    }
    case "LlmSettings": {
      const model = (attempted.attributes as Record<string, unknown> | undefined)?.model_name;
      const l = [...s.llmSettings.values()].find((x) => (r.serverId === undefined ? (x.attributes as Record<string, unknown>).model_name === model : x.id === r.serverId));
      return l === undefined ? undefined : String(l.id);
    }
    case "DashboardWebhook":
      return s.dashboardHooks.some((d) => d.name === attempted.name) ? "exists" : undefined;
    default:
      return undefined;
  }
}

/** The state matches the sandbox, except for resources in doubt. */
async function assertStateMatches(h: Harness): Promise<void> {
  const state = await h.state.read();
  const s = h.sandbox.inspect.store;
  const createKinds = new Set(["ApiProduct", "PortalWebhook", "LlmSettings", "DashboardWebhook"]);
  for (const r of state.resources.values()) {
    if (r.status !== "applied") continue;
    if (createKinds.has(r.kind)) expect(findCreated(h, r), `${r.id} recorded as applied but not on the server`).toBeDefined();
    if (r.kind === "OrgKey") expect(s.orgKeys.has(r.address.keyID!), r.id).toBe(true);
    if (r.kind === "OAuthClient") expect(s.oauthClients.get(`${r.address.apiID}\0${r.address.keyName}`)?.redirect_uri, r.id).toBe((r.applied as Record<string, unknown>).redirect_uri);
    if (r.kind === "ApiDefinition") expect(s.apis.get(r.address.apiID!)?.document, r.id).toBeDefined();
  }
  // and every object created on the server is accounted for: applied, or in doubt
  const accounted = (kind: string, exists: (r: ResourceRecord) => boolean): number => [...state.resources.values()].filter((r) => r.kind === kind && (r.status === "in-doubt" || (r.status === "applied" && exists(r)))).length;
  expect(accounted("ApiProduct", (r) => findCreated(h, r) !== undefined)).toBeGreaterThanOrEqual(s.products.size);
  expect(accounted("PortalWebhook", (r) => findCreated(h, r) !== undefined)).toBeGreaterThanOrEqual(s.portalWebhooks.size);
  expect(accounted("LlmSettings", (r) => findCreated(h, r) !== undefined)).toBeGreaterThanOrEqual(s.llmSettings.size);
  expect(accounted("DashboardWebhook", (r) => findCreated(h, r) !== undefined)).toBeGreaterThanOrEqual(s.dashboardHooks.length);
}

/** What an operator does with an in-doubt resource: look at the server, then --id or --forget. */
async function resolveInDoubt(h: Harness): Promise<number> {
  const state = await h.state.read();
  const config = path.join(h.dir, "gatesync.yaml");
  let resolved = 0;
  for (const r of state.resources.values()) {
    // a dashboard webhook settles itself: the next apply sends it again (409: it exists)
    if (r.status !== "in-doubt" || r.kind === "DashboardWebhook") continue;
    resolved++;
    let args: string[];
    if (r.kind === "OrgKey") {
      // a write carrying a quota reset: did the reset happen?
      args = (h.sandbox.inspect.store.orgKeys.get(r.address.keyID!)?.quotaResets ?? 0) > 0 ? ["--accept"] : ["--forget"];
    } else {
      const id = findCreated(h, r);
      args = id === undefined ? ["--forget"] : ["--id", id];
    }
    const out = await runCli(["state", "resolve", r.id, ...args, "--config", config], h.env);
    expect(out.code, out.stderr).toBe(0);
  }
  return resolved;
}

describe("crash safety", () => {
  it(`survives ${trials} SIGKILLs at random moments: nothing duplicated, nothing lost`, async () => {
    const rng = xoroshiro128plus(seed);
    const next = (lo: number, hi: number): number => uniformInt(rng, lo, hi);
    const report = { seed, trials, killedMidRun: 0, inDoubtResolved: 0, recoveryApplies: 0, duplicates: 0, lost: 0 };
    for (let t = 0; t < trials; t++) {
      const h = await harness({ sandbox: { faults: { latencyMs: 10, jitterMs: 20, interfaces: ["gateway", "portal", "dashboard", "llm"] }, seed: t + 1 } });
      try {
        const killAfter = next(0, callsPerApply);
        const run = applyChild(h);
        let killed = false;
        const watcher = (async () => {
          while (!killed) {
            if (externalCalls(h) >= killAfter) {
              run.kill();
              killed = true;
              return;
            }
            await sleep(1);
          }
        })();
        const code = await run.done;
        killed = true;
        await watcher;
        if (code === null) report.killedMidRun++;
        assertNoDuplicates(h);
        await assertStateMatches(h);

        // restart until it converges
        let converged = false;
        for (let attempt = 0; attempt < 6 && !converged; attempt++) {
          report.inDoubtResolved += await resolveInDoubt(h);
          report.recoveryApplies++;
          const again = applyChild(h);
          converged = (await again.done) === 0;
          assertNoDuplicates(h);
          await assertStateMatches(h);
        }
        expect(converged, `trial ${t} (kill after ${killAfter} calls) did not converge`).toBe(true);
        const plan = await h.plan();
        expect(plan.changes.filter((c) => c.action !== "no-op").map((c) => `${c.id} ${c.action}`)).toEqual([]);
        const s = h.sandbox.inspect.store;
        expect([s.products.size, s.portalWebhooks.size, s.dashboardHooks.length, s.llmSettings.size]).toEqual([2, 2, 2, 2]);
        expect(s.orgKeys.get("org-acme")?.quotaResets).toBe(1);
      } finally {
        await h.stop();
      }
    }
    writeFileSync(path.join(tmpdir(), "gatesync-crash-report.json"), JSON.stringify(report, null, 2));
    process.stdout.write(`crash safety: ${JSON.stringify(report)}\n`);
    expect(report.killedMidRun).toBeGreaterThan(trials / 3);
  }, 900_000);
});
