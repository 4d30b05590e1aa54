/**
 * `/status` of one environment as the daemon serves it: its role, the newest run and the last
 * success, the config in force, and its resources (redacted; listed once per snapshot).
 */
import type { StateSnapshot, StateVersion } from "../../record/state.js";
import { scrubDeep } from "../../secrets/redaction.js";
import type { RunEntry } from "../history/run-record.js";
import type { ConfigStatus } from "../environments/config-reload.js";
import type { RunHistory } from "../history/run-history.js";
import type { ServedReconciler } from "./served.js";

/** What /status reads of the runs: the history's newest (history/run-history.ts), the leader's on a standby. */
export type RunView = Pick<RunHistory, "fresh" | "newest" | "lastSuccess" | "synced">;

/** What one environment's `/status` is made of. */
export interface StatusParts {
  readonly reconciler: Pick<ServedReconciler, "isStopping">;
  readonly runs: RunView;
  readonly sourceDescription: string;
  /** `leader`, `standby` or `single`. */
  readonly role?: () => string;
  /** The config file in force, and a refused reload's errors. */
  readonly config?: () => ConfigStatus;
}

/** A recorded health as the status endpoint lists it: its verdict, when it was checked, and why it failed. */
const healthSummary = (health: { readonly ok: boolean; readonly checkedAt: string; readonly reason?: string }): Record<string, unknown> => ({
  ok: health.ok,
  checkedAt: health.checkedAt,
  ...(health.reason === undefined ? {} : { reason: health.reason }),
});

export async function buildStatus(opts: StatusParts & { readonly state: { read(): Promise<StateSnapshot> } }): Promise<Record<string, unknown>> {
  await opts.runs.fresh();
  const state = await opts.state.read();
  let resources = resourcesOf.get(state);
  if (resources === undefined) {
    resources = scrubDeep(
      [...state.resources.values()]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map((x) => ({
          id: x.id,
          status: x.status,
          ...(x.serverId === undefined ? {} : { serverId: x.serverId }),
          ...(x.error === undefined ? {} : { error: x.error }),
          ...(x.health === undefined ? {} : { health: healthSummary(x.health.read()) }),
          ...(x.commit === undefined ? {} : { commit: x.commit }),
          updatedAt: x.updatedAt,
        })),
    );
    resourcesOf.set(state, resources);
  }
  return { ...scrubDeep(statusHead(opts, state)), resources };
}

/** `/status` without its resources (the status of every environment): the state's version is read, none of its records. */
export async function buildStatusHead(opts: StatusParts & { readonly version: () => Promise<StateVersion> }): Promise<Record<string, unknown>> {
  await opts.runs.fresh();
  return scrubDeep(statusHead(opts, await opts.version()));
}

/** The resources of /status, listed once per snapshot of the state (the snapshot is shared and cached). */
const resourcesOf = new WeakMap<StateSnapshot, unknown[]>();

function statusHead(opts: StatusParts, state: StateVersion): Record<string, unknown> {
  const r = opts.reconciler;
  const newest = opts.runs.newest();
  const success = opts.runs.lastSuccess();
  return {
    service: "gatesync",
    role: opts.role?.() ?? "single",
    ready: !r.isStopping,
    synced: opts.runs.synced,
    source: opts.sourceDescription,
    ...(opts.config === undefined ? {} : { config: opts.config() }),
    commit: success?.commit ?? success?.revision ?? null,
    lastSuccess: success === undefined ? null : { at: success.at, revision: success.revision },
    lastRun: newest === undefined ? null : lastRunOf(newest),
    plan: newest?.record.report.plan ?? null,
    state: { lineage: state.lineage, serial: state.serial },
  };
}

/** The newest run as /status names it: by whichever replica ran it, with its commit's author and subject. */
function lastRunOf(newest: RunEntry): Record<string, unknown> {
  const { record } = newest;
  const last = record.report;
  return {
    reason: record.trigger,
    result: record.outcome,
    startedAt: record.startedAt,
    durationMs: record.durationMs,
    revision: record.revision ?? null,
    ...(record.commit === undefined ? {} : { commit: record.commit }),
    ...(record.author === undefined ? {} : { author: record.author }),
    ...(record.subject === undefined ? {} : { subject: record.subject }),
    replica: record.replica,
    ...(newest.repeats === 0 ? {} : { repeats: newest.repeats, since: newest.firstAt }),
    ...(last.error === undefined ? {} : { error: last.error }),
    ...(last.diagnostics === undefined ? {} : { errors: last.diagnostics.filter((d) => d.severity === "error") }),
    // the governance rules' warnings, info and hints of an applied revision
    ...(last.ruleFindings === undefined ? {} : { ruleFindings: last.ruleFindings }),
    // operator settings the repository's gatesync.yaml writes, which the daemon ignores
    ...(last.ignoredSettings === undefined ? {} : { ignoredSettings: last.ignoredSettings }),
    ...(last.summary === undefined
      ? {}
      : {
          applied: record.counts.applied,
          failed: last.summary.failed,
          inDoubt: last.summary.inDoubt,
          blocked: last.summary.blocked,
          calls: last.summary.calls,
        }),
    // the run may say applied while a check failed: why, on the run itself
    ...(record.checkFailures === undefined ? {} : { checkFailures: record.checkFailures }),
  };
}
