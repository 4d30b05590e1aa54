/**
 * What the pages, /status and the plan preview read: one cached snapshot of the state and the
 * preview of the next plan made from it. One daemon and each environment of a daemon build the
 * same pair.
 */
import type { OwnershipRegistry } from "../../record/ownership/ownership.js";
import { runPlan } from "../../run/run-plan.js";
import type { StateBackend } from "../../record/state.js";
import type { RepositoryValidator } from "../../validate/repository/repository-validator.js";
import type { Reconciler } from "../loop/reconciler.js";
import { effectiveSettings } from "../../run/effective-settings.js";
import { CachedState } from "./cached-state.js";
import { PlanPreview } from "./plan-preview.js";
import type { RunHistory } from "../history/run-history.js";

export interface StateViewParts {
  readonly reconciler: Reconciler;
  readonly history: RunHistory;
  readonly state: StateBackend;
  readonly validator: RepositoryValidator;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Whether another process writes this state (a PostgreSQL state a leader or a fleet writes):
   * it is read again every 2 s, else once a minute while no run is under way.
   */
  readonly writtenElsewhere: boolean;
  /** The ownership registry the preview checks against, as the run does (docs/user/teams.md). */
  readonly ownership?: OwnershipRegistry;
}

export function stateViews(parts: StateViewParts): { readonly snapshots: CachedState; readonly preview: PlanPreview } {
  const { reconciler, history, state } = parts;
  const snapshots = new CachedState(
    state,
    () => String(history.live.seq),
    () => (parts.writtenElsewhere || history.live.running ? 2_000 : 60_000),
  );
  const preview = new PlanPreview({
    snapshot: () => reconciler.lastSnapshot,
    state: snapshots,
    configHash: () => reconciler.configInForce.hash,
    // the config the next run would take: the operator's with the commit's team settings, as the run reads them
    plan: async (snap) =>
      runPlan({
        config: (await effectiveSettings(reconciler.configInForce.config, snap)).config,
        root: snap.root,
        boundary: snap.boundary,
        validator: parts.validator,
        state,
        ...(parts.ownership === undefined ? {} : { ownership: parts.ownership }),
        env: parts.env,
        ...(snap.commit === undefined ? {} : { commit: snap.commit }),
        // a preview, no run: not in the trace of the run it may overlap
        traced: false,
      }),
  });
  return { snapshots, preview };
}
