/**
 * An environment's run history as one daemon or one environment unit wires it: the view of the
 * history in the environment's state (ui/run-history.ts), and the metrics that follow its newest
 * run — on every replica the last success (gatesync_last_success_*), and on a standby, which
 * runs nothing, whether the leader left the environment synced and which commit is in force.
 */
import { hostname } from "node:os";
import type { GatesyncConfig } from "../../config/config.js";
import { GatesyncError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { StateBackend } from "../../record/state.js";
import type { RunMetrics } from "../metrics/metrics.js";
import type { LastSuccess, RunEntry } from "./run-record.js";
import { RunHistory } from "./run-history.js";

export interface SharedHistoryParts {
  readonly state: StateBackend;
  /** The config in force: its `history:` bound. */
  readonly config: () => GatesyncConfig;
  readonly metrics: RunMetrics;
  /** This replica's loop's answer to "synced", while it runs the environment (`reconciler.synced`). */
  readonly synced: () => boolean;
  /** Whether this replica runs the environment now (leads it, or is the only one). */
  readonly leads: () => boolean;
  readonly logger: Logger;
  /** This replica's name (a fleet's); default host:pid. */
  readonly replica?: string;
}

/** The run history of one environment, reading the rows its state holds. */
export function sharedRunHistory(parts: SharedHistoryParts): RunHistory {
  const log = parts.logger.child({ component: "history" });
  const history = new RunHistory({
    store: parts.state,
    bound: () => parts.config().history,
    replica: parts.replica ?? `${hostname()}:${process.pid}`,
    follows: () => !parts.leads(),
    syncedHere: parts.synced,
    onNewest: (newest, lastSuccess) => followNewest(parts, newest, lastSuccess),
    onError: (err) =>
      log.warn(
        { err: (err as Error).message, ...(err instanceof GatesyncError ? { code: err.code } : {}) },
        "history row not written or read: the runs view keeps what it had",
      ),
  });
  history.start();
  return history;
}

/** The metrics the newest run sets; a leader's loop sets synced and the commit itself, as it goes. */
function followNewest(parts: SharedHistoryParts, newest: RunEntry, lastSuccess: LastSuccess | undefined): void {
  if (lastSuccess !== undefined) parts.metrics.setLastSuccess(Date.parse(lastSuccess.at) / 1000);
  if (parts.leads()) return;
  parts.metrics.setSynced(newest.record.synced);
  const inForce = lastSuccess?.commit ?? lastSuccess?.revision;
  if (inForce !== undefined) parts.metrics.setCommit(inForce);
}
