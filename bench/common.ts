/** What every part of the benchmark shares: settings, the environment, timing helpers. */
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
