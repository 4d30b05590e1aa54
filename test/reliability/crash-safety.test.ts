/**
 * Crash safety: `gatesync apply` or `gatesync run --once` as a child process against the
 * sandbox, killed with SIGKILL at a seeded-random moment of its run (after a random number of
 * calls reached the sandbox, plus a random few milliseconds, so kills land inside state
 * transactions and the grouped writes of a batch call's results too), then applied again until
 * it converges. After every kill: the state is readable, nothing was created twice, and the
 * state matches what the sandbox holds except for resources it reports in doubt (nothing
 * lost). Once the in-doubt ones are resolved the way an operator would, the final plan is
 * empty and each quota reset happened exactly once.
 *
 *   GATESYNC_CRASH_TRIALS=200 GATESYNC_CRASH_SEED=7 npx vitest run test/reliability/crash-safety.test.ts
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { tmpdir } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { afterAll, describe, expect, it } from "vitest";
import { credentialEnv, harness } from "../helpers/apply.js";
import { assertNoDuplicates, assertStateMatches, converge, externalCalls, gatesyncChild } from "../helpers/convergence.js";
import { testCredentials } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const trials = Number(process.env.GATESYNC_CRASH_TRIALS ?? 30);
const seed = Number(process.env.GATESYNC_CRASH_SEED ?? 20261121);
/** External calls a complete apply of the examples makes (12 calls + 1 check batch). */
const callsPerApply = 13;

describe("crash safety", () => {
  it("counts only its own processes' objects: an apply with the shared test credentials (a daemon another run left behind) changes nothing", async () => {
    const h = await harness({ ownCredentials: true });
    try {
      const stray = gatesyncChild(h, "apply", credentialEnv(testCredentials));
      expect(await stray.done).not.toBe(0);
      const s = h.sandbox.inspect.store;
      expect([s.products.size, s.portalWebhooks.size, s.dashboardHooks.length, s.llmSettings.size, s.orgKeys.get("acme")?.quotaResets ?? 0]).toEqual([
        0, 0, 0, 0, 0,
      ]);
    } finally {
      await h.stop();
    }
  });

  it(`survives ${trials} SIGKILLs of apply and run at random moments: state readable, nothing duplicated, nothing lost`, async () => {
    const rng = xoroshiro128plus(seed);
    const next = (lo: number, hi: number): number => uniformInt(rng, lo, hi);
    const report = { seed, trials, apply: 0, run: 0, killedMidRun: 0, inDoubtResolved: 0, recoveryApplies: 0, duplicates: 0, lost: 0, unreadable: 0 };
    for (let t = 0; t < trials; t++) {
      const h = await harness({
        ownCredentials: true,
        sandbox: { faults: { latencyMs: 10, jitterMs: 20, interfaces: ["gateway", "portal", "dashboard", "llm"] }, seed: t + 1 },
      });
      try {
        const command = t % 2 === 0 ? "apply" : "run";
        report[command]++;
        const killAfter = next(0, callsPerApply);
        const extraMs = next(0, 15);
        const child = gatesyncChild(h, command);
        let exited = false;
        const watcher = (async () => {
          while (!exited) {
            if (externalCalls(h) >= killAfter) {
              if (extraMs > 0) await sleep(extraMs);
              child.kill();
              return;
            }
            await sleep(1);
          }
        })();
        const code = await child.done;
        exited = true;
        await watcher;
        if (code === null) report.killedMidRun++;
        const callsAtExit = externalCalls(h);
        // the state is readable after every kill
        const afterKill = await h.state.read().catch((err: unknown) => {
          report.unreadable++;
          throw err;
        });
        const recorded = [...afterKill.resources.values()].map((r) => `${r.id}: ${r.status}`).join(", ");
        assertNoDuplicates(h);
        await assertStateMatches(h);
        const done = await converge(h).catch((err: unknown) => {
          const at = `trial ${t} (${command}, kill after ${killAfter} calls + ${extraMs} ms, ${callsAtExit} calls when it ended)`;
          throw new Error(`${at}: ${(err as Error).message}\nstate after the kill: ${recorded}`, { cause: err });
        });
        report.recoveryApplies += done.applies;
        report.inDoubtResolved += done.inDoubtResolved;
      } finally {
        await h.stop();
      }
    }
    writeFileSync(path.join(tmpdir(), "gatesync-crash-report.json"), JSON.stringify(report, null, 2));
    process.stdout.write(`crash safety: ${JSON.stringify(report)}\n`);
    expect(report.killedMidRun).toBeGreaterThan(trials / 3);
  }, 1_200_000);
});
