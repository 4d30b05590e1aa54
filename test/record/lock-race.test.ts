/**
 * The lock race made deterministic: two `gatesync apply` processes both check the lock (free,
 * or held by a process that was killed), then both wait at a test-only pause between their
 * check and their take (GATESYNC_TEST_LOCK_PAUSE, honoured only with NODE_ENV=test) until the
 * test lets them go at once. The take is a compare-and-set on what each one read: exactly one
 * gets the lock and applies, the other is refused with STATE_LOCKED, and nothing is created twice.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { tsxLoader } from "../helpers/cli.js";
import { assertNoDuplicates, externalCalls, gatesyncChild } from "../helpers/convergence.js";
import { projectRoot, removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

async function waitFor(what: string, ok: () => boolean, ms = 60_000, detail: () => string = () => ""): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what} ${detail()}`);
    await sleep(10);
  }
}

/** Leaves the lock held by a process that is gone (killed with SIGKILL while holding it). */
async function leaveDeadHolder(file: string): Promise<void> {
  const child = spawn(process.execPath, ["--import", tsxLoader, path.join(projectRoot, "test/helpers/hold-lock.ts"), file], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => child.stdout.on("data", (b: Buffer) => b.toString().includes("locked") && resolve()));
  child.kill("SIGKILL");
  await new Promise((resolve) => child.on("close", resolve));
}

describe("two applies racing for the lock", () => {
  it.each([["free"], ["held by a killed process"]])(
    "with the lock %s: never both hold it, exactly one applies",
    async (start) => {
      const h = await harness();
      try {
        if (start !== "free") await leaveDeadHolder(path.join(h.dir, "state/state.db"));
        const pause = await mkdtemp(path.join(tmpdir(), "gatesync-lock-race-"));
        const env = { NODE_ENV: "test", GATESYNC_TEST_LOCK_PAUSE: pause };
        const a = gatesyncChild(h, "apply", env);
        const b = gatesyncChild(h, "apply", env);
        // both have checked the lock and found it takeable; neither has taken it yet (a child that
        // ends before its check fails the test at once, with what it said)
        const ended: string[] = [];
        for (const [name, child] of [
          ["a", a],
          ["b", b],
        ] as const)
          void child.done.then((code) => ended.push(`${name} exited ${code}: ${JSON.stringify(child.output())}`));
        await waitFor(
          "both checks",
          () => {
            if (ended.length > 0) throw new Error(`a racer ended before its check: ${ended.join("; ")}`);
            return readdirSync(pause).filter((f) => f.startsWith("checked-")).length === 2;
          },
          60_000,
          () => JSON.stringify({ a: a.output(), b: b.output(), pause: readdirSync(pause) }),
        );
        expect(externalCalls(h)).toBe(0);
        await writeFile(path.join(pause, "go"), "");
        const codes = [await a.done, await b.done];
        const outputs = [a.output(), b.output()];
        const detail = JSON.stringify({ codes, outputs });
        // exactly one was refused the lock, before any call; the other applied
        const losers = outputs.flatMap((o, i) => (o.stderr.includes("error[STATE_LOCKED]") ? [i] : []));
        expect(losers, detail).toHaveLength(1);
        const loser = losers[0]!;
        const winner = 1 - loser;
        expect(codes[loser]).toBe(1);
        expect(outputs[loser]!.stdout, detail).not.toContain("Apply:");
        expect(outputs[winner]!.stdout, detail).toMatch(/^Apply: \d+ applied/m);
        expect(outputs[winner]!.stderr, detail).not.toContain("STATE_LOCKED");
        assertNoDuplicates(h);
        const s = h.sandbox.inspect.store;
        expect([s.products.size, s.portalWebhooks.size, s.dashboardHooks.length, s.llmSettings.size]).toEqual([2, 2, 2, 2]);
        expect(existsSync(path.join(pause, "go"))).toBe(true);
      } finally {
        await h.stop();
      }
    },
    120_000,
  );
});
