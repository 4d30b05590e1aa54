/**
 * The rows of environments running side by side (issue 45), measured on the 20-environment
 * daemon of bench/environments.ts:
 *
 * - a forced re-plan of all 20 at once (`POST /sync`) against the sum of the 20 re-plans of one
 *   environment each (`POST /environments/NAME/sync`), one after another: pairs, each ratio in
 *   one pair (the same load for both halves);
 * - a commit that changes every environment while the first environment's sandbox answers every
 *   call in 5 s: how long the other environments take from the push to applied, against the
 *   same commit with no slow sandbox (rounds alternate).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxHandle } from "../src/sandbox/sandbox.js";
import { log } from "./common.js";
import type { Figure } from "./figures.js";
import { figure } from "./figures.js";
import type { Generated } from "./generate.js";
import { names, status, trigger, until } from "./environments-daemon.js";
import type { Status } from "./environments-daemon.js";

const ratioOf = (a: number, b: number): number => Math.round((a / b) * 100) / 100;

/** Waits until every environment in `which` ran for `reason` since `since`. */
async function ranSince(url: string, which: readonly string[], reason: string, since: string): Promise<Status> {
  return until(
    () => status(url),
    (s) =>
      s.environments
        .filter((e) => which.includes(e.environment))
        .every((e) => e.lastRun !== null && e.lastRun.reason === reason && e.lastRun.startedAt >= since),
    600_000,
    `for the ${reason} runs of ${which.length} environments`,
  );
}

/** The wall time of a forced re-plan of `which` (all at once, or one environment). */
async function forcedReplan(url: string, which: readonly string[]): Promise<number> {
  const since = new Date().toISOString();
  const t = performance.now();
  await trigger(url, which.length === 1 ? `environments/${which[0]!}/sync` : "sync");
  await ranSince(url, which, "sync", since);
  return performance.now() - t;
}

export interface ReplanRows {
  readonly allAtOnceMs: Figure;
  readonly eachAloneSumMs: Figure;
  /** allAtOnce / eachAloneSum, per pair (target ≤ 0.6). */
  readonly ratio: Figure;
}

/** `pairs` × (a forced re-plan of all, then each environment's alone one after another). */
export async function replanAllVersusEach(url: string, pairs: number): Promise<ReplanRows> {
  const all: number[] = [];
  const each: number[] = [];
  for (let i = 0; i < pairs; i++) {
    log(`[environments] forced re-plan of all at once, then of each alone (pair ${i + 1}/${pairs})`);
    all.push(await forcedReplan(url, names));
    let sum = 0;
    for (const n of names) sum += await forcedReplan(url, [n]);
    each.push(sum);
  }
  return { allAtOnceMs: figure(all), eachAloneSumMs: figure(each), ratio: figure(all.map((a, i) => ratioOf(a, each[i]!))) };
}

/** Changes the first `rate:` of `file` (a resource every environment applies): a commit for all. */
async function changeEveryEnvironment(g: Generated, file: string, rate: number): Promise<void> {
  const at = path.join(g.root, file);
  let first = true;
  const text = (await readFile(at, "utf8")).replace(/rate: \d+/g, (m) => {
    if (!first) return m;
    first = false;
    return `rate: ${rate}`;
  });
  await writeFile(at, text);
}

/** From the push to each environment's run applied, ms (its run's start + duration). */
async function pushToApplied(url: string, since: string, pushedAt: number): Promise<Map<string, number>> {
  const s = await ranSince(url, names, "webhook", since);
  return new Map(s.environments.map((e) => [e.environment, Date.parse(e.lastRun!.startedAt) + e.lastRun!.durationMs - pushedAt]));
}

export interface SlowNeighbourRows {
  readonly slowLatencyMs: number;
  /** The environment listed right after the slow one (taking turns, it waited for it). */
  readonly nextApplied: { readonly baselineMs: Figure; readonly withSlowMs: Figure; readonly ratio: number };
  /** The last of the 19 others to apply. */
  readonly lastOtherApplied: { readonly baselineMs: Figure; readonly withSlowMs: Figure; readonly ratio: number };
  readonly slowApplied: Figure;
  readonly results: readonly string[];
}

/** Rounds of a commit for all: without, then with, the first environment's sandbox answering in `latencyMs`. */
export async function slowNeighbour(url: string, boxes: readonly SandboxHandle[], g: Generated, rounds: number, latencyMs = 5_000): Promise<SlowNeighbourRows> {
  const file = g.files.filter((f) => f.startsWith("orgkey/"))[1]!;
  const samples = { next: [[], []] as number[][], last: [[], []] as number[][], slow: [] as number[] };
  const results = new Set<string>();
  let rate = 100;
  for (let r = 0; r < rounds; r++) {
    for (const slow of [false, true]) {
      log(
        `[environments] a commit for all, ${slow ? `the first environment's sandbox answering in ${latencyMs} ms` : "every sandbox answering at once"} (round ${r + 1}/${rounds})`,
      );
      boxes[0]!.inspect.setFaults({ latencyMs: slow ? latencyMs : 0, interfaces: ["gateway", "portal", "dashboard", "llm"] });
      await changeEveryEnvironment(g, file, rate++);
      const since = new Date().toISOString();
      const pushedAt = Date.now();
      await trigger(url, "hooks/git");
      const applied = await pushToApplied(url, since, pushedAt);
      const others = names.slice(1).map((n) => applied.get(n)!);
      samples.next[slow ? 1 : 0]!.push(applied.get(names[1]!)!);
      samples.last[slow ? 1 : 0]!.push(Math.max(...others));
      if (slow) samples.slow.push(applied.get(names[0]!)!);
      for (const e of (await status(url)).environments) results.add(e.lastRun!.result);
    }
  }
  boxes[0]!.inspect.setFaults({ latencyMs: 0 });
  const row = (pair: number[][]): SlowNeighbourRows["nextApplied"] => {
    const [baselineMs, withSlowMs] = [figure(pair[0]!), figure(pair[1]!)];
    return { baselineMs, withSlowMs, ratio: ratioOf(withSlowMs.median, baselineMs.median) };
  };
  return {
    slowLatencyMs: latencyMs,
    nextApplied: row(samples.next),
    lastOtherApplied: row(samples.last),
    slowApplied: figure(samples.slow),
    results: [...results],
  };
}
