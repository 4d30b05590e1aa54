/** What every part of the benchmark shares: settings, the environment, timing helpers. */
import { cpus, loadavg } from "node:os";
import type { Figure } from "./figures.js";
import { figure } from "./figures.js";

export const quick = process.env.BENCH_QUICK !== undefined;
export const reps = quick ? 3 : 5;
const secret = "bench-secret-value-0123456789";
export const env = {
  BENCH_SECRET: secret,
  GW_KEY: "bench-gw",
  PORTAL_KEY: "bench-portal",
  DASH_KEY: "bench-dash",
  LLM_KEY: "bench-llm",
  BATCH_KEY: "bench-loopback-key",
};
export const credentials = { gatewayKey: env.GW_KEY, portalKey: env.PORTAL_KEY, dashboardToken: env.DASH_KEY, llmKey: env.LLM_KEY };

export async function repeat(n: number, fn: () => Promise<number>): Promise<Figure> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await fn());
  return figure(samples);
}

export async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The load average now, to a tenth. */
export const loadNow = (): number[] => loadavg().map((l) => Math.round(l * 10) / 10);

/** The machine a bench ran on, as its results file says it. */
export interface Machine {
  readonly node: string;
  readonly cores: number;
  readonly quick: boolean;
  readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] };
}

/** The machine a bench ran on: Node, cores, quick or not, and the load average at `start` and now. */
export function machineOf(start: readonly number[]): Machine {
  return { node: process.version, cores: cpus().length, quick, loadAverage: { start, end: loadNow() } };
}

/** The head of a part's results file: when, which part, on what machine (load from `start`), and how long since `startedMs`. */
export function resultsHead(
  parts: string,
  start: readonly number[],
  startedMs: number,
): { date: string; parts: string; machine: Machine; durationSeconds: number } {
  return { date: new Date().toISOString(), parts, machine: machineOf(start), durationSeconds: Math.round((Date.now() - startedMs) / 1000) };
}
