/** The action of `gatesync history` (history-command.ts declares it), loaded when it runs. */
import { openStateBackend } from "../record/open-backend.js";
import { runEntryOf } from "../daemon/run-record.js";
import type { RunEntry } from "../daemon/run-record.js";
import type { CliIo } from "./cli-io.js";
import { environmentConfig } from "./environment-option.js";

export interface HistoryOptions {
  readonly config: string;
  readonly env?: string;
  readonly format: "text" | "json";
  readonly limit: number;
}

/** One run as JSON: the row's record, its place, and its folded repeats. */
function runJson(e: RunEntry): Record<string, unknown> {
  const { report: _report, ...record } = e.record;
  return { seq: e.seq, ...record, repeats: e.repeats, firstAt: e.firstAt, lastAt: e.lastAt };
}

/** One run in a line or two: when, what, which commit by whom, the counts, the replica. */
function runText(e: RunEntry): string {
  const r = e.record;
  const c = r.counts;
  const commit = (r.commit ?? r.revision ?? "no revision").slice(0, 12);
  const repeats = e.repeats === 0 ? "" : ` (×${e.repeats + 1} until ${e.lastAt})`;
  const counts = `${c.applied} applied, ${c.failed} failed, ${c.inDoubt} in doubt, ${c.blocked} blocked, ${c.calls} calls`;
  const lines = [`#${e.seq} ${r.startedAt} ${r.outcome.padEnd(12)} ${r.trigger} · ${commit} · ${counts} · ${r.durationMs} ms · on ${r.replica}${repeats}`];
  if (r.subject !== undefined || r.author !== undefined) lines.push(`    ${r.subject ?? ""}${r.author === undefined ? "" : ` — ${r.author}`}`);
  if (r.report.error !== undefined) lines.push(`    error: ${r.report.error}`);
  return lines.join("\n");
}

export async function historyAction(opts: HistoryOptions, io: CliIo): Promise<void> {
  const config = await environmentConfig(opts.config, opts.env, "history");
  const state = openStateBackend(config, io.env);
  try {
    const runs = (await state.readHistory({ kind: "run", limit: opts.limit })).flatMap((e) => runEntryOf(e) ?? []);
    if (opts.format === "json") io.stdout(`${JSON.stringify({ state: state.description, runs: runs.map(runJson) }, null, 2)}\n`);
    else if (runs.length === 0) io.stdout(`no run recorded in ${state.description} yet\n`);
    else io.stdout(`${runs.map(runText).join("\n")}\n`);
  } finally {
    await state.close();
  }
}
