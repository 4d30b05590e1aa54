/** The implicit environment as a server started in a test serves it: its state, runs and `/status`, no page. */
import { ownershipAnswer } from "../../src/daemon/http/ownership-endpoint.js";
import type { OwnershipAnswer } from "../../src/daemon/http/ownership-endpoint.js";
import type { GatesyncConfig } from "../../src/config/config.js";
import { sharedRunHistory } from "../../src/daemon/history/shared-history.js";
import type { ServedEnvironments } from "../../src/daemon/http/served.js";
import { buildStatus } from "../../src/daemon/http/status-body.js";
import type { StatusParts } from "../../src/daemon/http/status-body.js";
import { DaemonMetrics } from "../../src/daemon/metrics/metrics.js";
import { silentLogger } from "../../src/logger.js";
import type { StateBackend } from "../../src/record/state.js";

/** What a test's server is built from: the loop, its state and its config; the run history is the daemon's own, on that state. */
export interface TestEnvironmentParts {
  readonly reconciler: StatusParts["reconciler"] & { readonly synced: boolean };
  readonly state: StateBackend;
  readonly config: GatesyncConfig;
}

export function implicitEnvironment({ reconciler, state, config }: TestEnvironmentParts): ServedEnvironments {
  const runs = sharedRunHistory({
    state,
    config: () => config,
    synced: () => reconciler.synced,
    metrics: new DaemonMetrics(),
    leads: () => true,
    logger: silentLogger(),
  });
  const status = (): Promise<Record<string, unknown>> => buildStatus({ reconciler, runs, state, sourceDescription: "test" });
  // no registry in these tests: the environment's targets have no rows
  const ownership = (): Promise<OwnershipAnswer> => ownershipAnswer(config, { rowsOf: () => Promise.resolve([]) });
  return { implicit: true, list: [{ name: "default", page: undefined, state, status, ownership }], statusOfAll: status };
}
