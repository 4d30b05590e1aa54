/**
 * One plan from a config: load and validate the repository (secrets must resolve), read the
 * state (no lock), prepare the desired set and compute the plan. IO lives here; the planning
 * itself is `computePlan`.
 */
import { ValidationFailed, hasErrors } from "../errors.js";
import type { GatesyncConfig } from "../config/config.js";
import type { Resource } from "../kinds/resource.js";
import { EnvFileSecretSource } from "../load/secret-refs.js";
import type { StateBackend, StateSnapshot } from "../record/state.js";
import type { RepositoryValidator } from "../validate/validate-repository.js";
import type { DesiredMemo, DesiredSet } from "./desired.js";
import { hashKeyFor, prepareDesired } from "./desired.js";
import type { Plan } from "./plan.js";
import { computePlan } from "./plan.js";

export interface PlanRun {
  readonly plan: Plan;
  readonly state: StateSnapshot;
  readonly resources: readonly Resource[];
  readonly desired: DesiredSet;
  /** The hash key, and whether the state must store it on first write. */
  readonly hashKey: { readonly key: string; readonly store: string | undefined };
  readonly warnings: number;
}

export interface PlanRunInput {
  readonly config: GatesyncConfig;
  /** Resource directory (the config's, or a checkout of the git source). */
  readonly root: string;
  /** The repository root, when the resources are a part of it. */
  readonly boundary?: string;
  readonly validator: RepositoryValidator;
  readonly state: StateBackend;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly commit?: string;
  readonly now?: () => Date;
  readonly reassert?: boolean;
  /** Kept across runs by a daemon: unchanged resources are not prepared again. */
  readonly desiredMemo?: DesiredMemo;
}

export async function runPlan(input: PlanRunInput): Promise<PlanRun> {
  const { config, env } = input;
  const secrets = new EnvFileSecretSource(env, config.secrets.fileRoot);
  const appTypeProviders = new Set(config.targets.portal?.appTypeProviders ?? []);
  const result = await input.validator.validate({
    root: input.root,
    ...(input.boundary === undefined ? {} : { boundary: input.boundary }),
    limits: config.limits,
    appTypeProviders,
    secrets: { source: secrets, missing: "error" },
  });
  if (hasErrors(result.diagnostics)) throw new ValidationFailed(result.diagnostics);
  const state = await input.state.read();
  const hashKey = hashKeyFor(env, state);
  const desired = prepareDesired(result.resources, { secrets, hashKey: hashKey.key, appTypeProviders, ...(input.desiredMemo === undefined ? {} : { memo: input.desiredMemo }) });
  if (hasErrors(desired.diagnostics)) throw new ValidationFailed(desired.diagnostics);
  const batch = config.targets.gateway?.batch;
  const plan = computePlan(desired.desired, state, {
    orphans: config.orphans,
    ...(batch === undefined ? {} : { batch: { maxSize: batch.maxSize } }),
    ...(input.commit === undefined ? {} : { commit: input.commit }),
    now: (input.now ?? (() => new Date()))().toISOString(),
    hashKey: hashKey.key,
    ...(input.reassert === true ? { reassert: true } : {}),
  });
  return { plan, state, resources: result.resources, desired, hashKey, warnings: result.diagnostics.length };
}
