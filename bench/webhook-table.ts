/** The push-to-applied part's table (bench/webhook-latency.ts measures; docs/dev/performance.md shows it). */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Figure } from "./figures.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const webhookResultsPath = path.join(here, "results.webhook.json");

/** bench/results.webhook.json. */
export interface WebhookRun {
  readonly date: string;
  readonly durationSeconds: number;
  readonly machine: { readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] } };
  readonly webhook: {
    readonly commits: number;
    readonly latencyMs: Figure & { readonly p90: number };
    readonly runMs: Figure;
  };
  /** BENCH_WEBHOOK_BEFORE: another build's daemon, interleaved with this one's. */
  readonly compare?: { readonly before: string; readonly rounds: number; readonly beforeMs: Figure; readonly afterMs: Figure; readonly ratio: number };
}

export const webhookMarkers = {
  start: "<!-- webhook-table:start (generated from bench/results.webhook.json by `npm run bench:table`; do not edit) -->",
  end: "<!-- webhook-table:end -->",
};

/** Issue #60's target for the median, on a quiet machine. */
const targetMs = 50;

const n0 = (n: number): string => Math.round(n).toLocaleString("en-GB");

export function webhookBenchTable(run: WebhookRun): string {
  const w = run.webhook;
  const load = run.machine.loadAverage;
  const cells = (r: readonly string[]): string => `| ${r.join(" | ")} |\n`;
  let out = cells(["figure", "p50", "p90", "spread", "target", "met"]);
  out += cells(["---", "---", "---", "---", "---", "---"]);
  out += cells([
    `commit → applied through the daemon's git webhook (${w.commits} commits)`,
    `${n0(w.latencyMs.median)} ms`,
    `${n0(w.latencyMs.p90)} ms`,
    `${n0(w.latencyMs.min)}–${n0(w.latencyMs.max)} ms`,
    `p50 < ${targetMs} ms`,
    w.latencyMs.median < targetMs ? "yes" : "**no**",
  ]);
  out += cells([
    "&nbsp;&nbsp;&nbsp;of which the run after its fetch (load, plan, apply)",
    `${n0(w.runMs.median)} ms`,
    "",
    `${n0(w.runMs.min)}–${n0(w.runMs.max)} ms`,
    "",
    "",
  ]);
  const c = run.compare;
  if (c !== undefined)
    out += cells([
      `the same, ${c.before}'s daemon and this one's, ${c.rounds} rounds each, interleaved`,
      `${n0(c.beforeMs.median)} → ${n0(c.afterMs.median)} ms (×${c.ratio})`,
      "",
      `${n0(c.beforeMs.min)}–${n0(c.beforeMs.max)} → ${n0(c.afterMs.min)}–${n0(c.afterMs.max)} ms`,
      "",
      "",
    ]);
  return `Run of ${run.date}:\n\n${out}\n(${run.durationSeconds} s in all; load average ${load.start.join(" ")} → ${load.end.join(" ")})\n`;
}
