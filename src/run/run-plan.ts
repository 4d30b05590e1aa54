/**
 * One plan from a config: load and validate the repository (secrets must resolve), read the
 * state (no lock), prepare the desired set (every secret looked up once, the documents to diff
 * read) and compute the plan. IO lives here; the planning
 * itself is `computePlan`.
 */
import { ValidationFailed, hasErrors } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { inRepository, repositoryPrefix } from "../source/repository-path.js";
import { repositoryPath } from "../file-paths.js";
import type { GatesyncConfig } from "../config/config.js";
import type { Resource } from "../kinds/resource.js";
import { registerCredentials } from "../config/credentials.js";
import { runSecretSource } from "../source/secret-roots.js";
import type { StateBackend, StateSnapshot } from "../record/state.js";
import { planScope } from "../plan/plan-scope.js";
import { emptyRequest, isSelective, scopeOf } from "../select/selection.js";
import type { Scope, SelectionRequest } from "../select/selection.js";
import { SecretResolver } from "../secrets/resolver.js";
import type { SecretSource } from "../secrets/resolver.js";
import { hashKeyFor } from "../secrets/hash-key.js";
import type { RepositoryResult, RepositoryValidator } from "../validate/repository/repository-validator.js";
import type { DesiredMemo, DesiredSet, OutgoingRequests } from "../plan/desired.js";
import { prepareDesired } from "../plan/prepare-desired.js";
import { noSecrets } from "../plan/outgoing.js";
import { payloadsNeeded } from "../plan/decide-change.js";
import type { PlannedChange } from "../plan/plan-change.js";
import type { Plan } from "../plan/plan.js";
import { computePlan } from "../plan/plan.js";
import type { PlanOptions } from "../plan/plan.js";
import { invocationOf, withInvocation } from "../printed-commands.js";
import type { Invocation } from "../printed-commands.js";
import { rulesetsOf } from "../rules/prepare-rules.js";
import { batchRouteOf, valuesOptionsOf } from "../config/environments.js";
import { tracedPlan, tracedValidation } from "./plan-spans.js";

export interface PlanRun {
  readonly plan: Plan;
  readonly state: StateSnapshot;
  readonly resources: readonly Resource[];
  readonly desired: DesiredSet;
  /** The hash key, and whether the state must store it on first write. */
  readonly hashKey: { readonly key: string; readonly store: string | undefined };
  readonly warnings: number;
  /** The governance rules' findings (none of them errors: an error stops the plan). */
  readonly ruleFindings: readonly Diagnostic[];
}

export interface PlanRunInput {
  readonly config: GatesyncConfig;
  /** false: a plan that is no run's (the status page's preview): no spans (telemetry/spans.ts: one run is traced at a time). */
  readonly traced?: false;
  /** Resource directory (the config's, or a checkout of the git source). */
  readonly root: string;
  /** The repository root, when the resources are a part of it. */
  readonly boundary?: string;
  readonly validator: RepositoryValidator;
  readonly state: StateBackend;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The commit planned: known, or git's answer awaited when the plan is computed (asked while the files are checked). */
  readonly commit?: string | Promise<string | undefined>;
  readonly now?: () => Date;
  readonly reassert?: boolean;
  /** Kept across runs by a daemon: unchanged resources are not prepared again. */
  readonly desiredMemo?: DesiredMemo;
  /**
   * "needed": read from the state only the payloads the plan reads (see ReadOptions): records of
   * unchanged resources come without theirs. The returned state is then for planning only, not
   * for an apply (which builds new records from the earlier ones).
   */
  readonly payloads?: "needed";
  /** Plan part of the repository (`--target`, `--exclude`, `--kind`, `--selector`); the config's `selector` always applies. */
  readonly selection?: SelectionRequest;
  /**
   * "plan": only the plan is used (`gatesync plan`): the resources are let go once the desired
   * set is prepared — the returned run has none and no bodies to send — so that a plan of
   * 100,000 resources does not hold them while it is computed and written.
   */
  readonly keep?: "plan";
  /** The plan will be printed as JSON, documents and all (ValidateOptions.printsDocuments). */
  readonly printsDocuments?: boolean;
  /** `--allow-mass-deactivation`: lifts the guard against mass deactivation for this run. */
  readonly allowMassDeactivation?: boolean;
  /** What the commands the plan's hints quote need (printed-commands.ts); default: the config's `--env` and `-c`. */
  readonly invocation?: Invocation;
}

/** The refusal of a repository with errors, its files named from the repository's root (`prefix`). */
function refused(prefix: string, diagnostics: readonly Diagnostic[]): ValidationFailed {
  return new ValidationFailed(inRepository(diagnostics, prefix));
}

/** The repository validated as the run needs it, in its `gatesync.validate` span. */
async function validateFor(
  input: PlanRunInput,
  run: {
    readonly rules: Awaited<ReturnType<typeof rulesetsOf>>;
    readonly prefix: string;
    readonly appTypeProviders: ReadonlySet<number>;
    readonly secrets: SecretResolver;
    readonly selective: boolean;
  },
): Promise<RepositoryResult> {
  const { config } = input;
  const validate = async (): Promise<RepositoryResult> =>
    input.validator.validate({
      ...(run.rules === undefined ? {} : { rules: run.rules }),
      root: input.root,
      ...(input.boundary === undefined ? {} : { boundary: input.boundary }),
      repositoryPrefix: run.prefix,
      limits: config.limits,
      ...valuesOptionsOf(config),
      ...batchRouteOf(config),
      appTypeProviders: run.appTypeProviders,
      ...(input.printsDocuments === true ? { printsDocuments: true } : {}),
      // a selection needs only its own secrets: the others' are checked when they are prepared
      secrets: { source: run.secrets, missing: run.selective ? "warning" : "error" },
    });
  return input.traced === false ? validate() : tracedValidation(validate);
}

/** What the planner is told besides the desired set and the state: the config's policies and the run's. */
function planOptions(input: PlanRunInput, hashKey: string, selection: PlanOptions["selection"], commit: string | undefined): PlanOptions {
  const { config } = input;
  const batch = config.targets.gateway?.batch;
  return {
    orphans: config.orphans,
    deactivationGuard: input.allowMassDeactivation === true ? { ...config.deactivationGuard, allow: true } : config.deactivationGuard,
    ...(batch === undefined ? {} : { batch: { maxSize: batch.maxSize } }),
    ...(commit === undefined ? {} : { commit }),
    now: (input.now ?? (() => new Date()))().toISOString(),
    hashKey,
    ...(input.reassert === true ? { reassert: true } : {}),
    ...(selection === undefined ? {} : { selection }),
  };
}

export async function runPlan(input: PlanRunInput): Promise<PlanRun> {
  const { config, env } = input;
  registerCredentials(config, env);
  // one resolver for the run: validation and the desired set look each reference up once between them;
  // a plan that sends nothing compares SOPS values it cannot decrypt by their encrypted form
  const withoutIdentity = input.keep === "plan" ? "placeholder" : "refuse";
  const secrets = new SecretResolver(runSecretSource(config, env, input, { withoutIdentity }));
  const appTypeProviders = new Set(config.targets.portal?.appTypeProviders ?? []);
  const request = input.selection ?? emptyRequest;
  // checked first: a mistyped flag is reported before any work
  const scope = isSelective(request, config.selector) ? scopeOf(request, config.selector) : undefined;
  // a ruleset that cannot be used stops the run before any file is read (CONFIG_INVALID)
  const rules = await rulesetsOf(config);
  const prefix = repositoryPrefix(input.root, input.boundary);
  // let go of (undefined) once the desired set is prepared, when only the plan is kept
  let validated: RepositoryResult | undefined = await validateFor(input, { rules, prefix, appTypeProviders, secrets, selective: scope !== undefined });
  if (hasErrors(validated.diagnostics)) throw refused(prefix, validated.diagnostics);
  const warnings = validated.diagnostics.length;
  const ruleFindings = validated.diagnostics.filter((d) => d.rule !== undefined);
  const prepare = (state: StateSnapshot): Prepared => prepareRun(input, validated!.resources, state, { secrets, appTypeProviders, scope });
  let prepared: Prepared | undefined;
  let failure: { readonly error: unknown } | undefined;
  const state = await input.state.read(
    input.payloads !== "needed"
      ? undefined
      : {
          // the desired set, prepared from the records without their payloads, says which payloads the plan reads
          payloadsFor: (heads) => {
            try {
              prepared = prepare(heads);
              return payloadsNeeded(prepared.desired.desired, heads);
            } catch (error) {
              failure = { error };
              return new Set(heads.resources.keys());
            }
          },
        },
  );
  if (failure !== undefined) throw failure.error;
  // a state never written is read without asking which payloads to read
  let ready: Prepared | undefined = prepared ?? prepare(state);
  prepared = undefined;
  const { hashKey, selected } = ready;
  if (hasErrors(ready.desired.diagnostics)) throw refused(prefix, ready.desired.diagnostics);
  // a plan only: nothing holds the resources from here on (the bodies to send would)
  const desired = input.keep === "plan" ? { ...ready.desired, outgoing: noOutgoing } : ready.desired;
  const resources = input.keep === "plan" ? [] : validated.resources;
  ready = undefined;
  validated = undefined;
  const commit = await input.commit;
  const compute = (): Plan => computePlan(desired.desired, state, planOptions(input, hashKey.key, selected?.plan, commit));
  const plan = input.traced === false ? compute() : tracedPlan(compute);
  return { plan: asShown(plan, input.invocation ?? invocationOf(config), prefix), state, resources, desired, hashKey, warnings, ruleFindings };
}

/**
 * The plan as gatesync shows it: the commands its hints quote completed for this config
 * (`--env`, `-c`: printed-commands.ts), and each change's file named from the repository's root
 * (`prefix`), as findings are. Its digest stays the one of the changes as planned: a plan saved
 * in one directory applies from another.
 */
function asShown(plan: Plan, inv: Invocation, prefix: string): Plan {
  const commands = inv.env !== undefined || inv.config !== undefined || inv.dir !== undefined;
  if (!commands && prefix === "") return plan;
  const quotes = (text: string | undefined): boolean => commands && text?.includes("`gatesync ") === true;
  const changes = plan.changes.map((c): PlannedChange => {
    if (!quotes(c.hint) && !quotes(c.reason) && (c.source === undefined || prefix === "")) return c;
    const { hint, reason, source, ...rest } = c;
    return {
      ...rest,
      ...(hint === undefined ? {} : { hint: withInvocation(hint, inv) }),
      ...(reason === undefined ? {} : { reason: withInvocation(reason, inv) }),
      ...(source === undefined ? {} : { source: { file: repositoryPath(prefix, source.file), line: source.line } }),
    };
  });
  return { ...plan, changes };
}

/** A plan-only run sends nothing. */
const noOutgoing: OutgoingRequests = { read: () => undefined, secretsOf: () => noSecrets };

interface Prepared {
  readonly hashKey: { readonly key: string; readonly store: string | undefined };
  readonly selected: ReturnType<typeof planScope> | undefined;
  readonly desired: DesiredSet;
}

/** The hash key, the selection and the desired set, against `state`. */
function prepareRun(
  input: PlanRunInput,
  resources: readonly Resource[],
  state: StateSnapshot,
  ctx: { readonly secrets: SecretSource; readonly appTypeProviders: ReadonlySet<number>; readonly scope: Scope | undefined },
): Prepared {
  const { config, env } = input;
  const hashKey = hashKeyFor(env, state.hashKey);
  const selected = ctx.scope === undefined ? undefined : planScope(resources, state, ctx.scope, config.selector);
  const desired = prepareDesired(resources, {
    secrets: ctx.secrets,
    hashKey: hashKey.key,
    appTypeProviders: ctx.appTypeProviders,
    ...(input.desiredMemo === undefined ? {} : { memo: input.desiredMemo }),
    // an apply keeps the resources to send their bodies: compares are made again from them
    ...(input.keep === "plan" ? {} : { compareFrom: "resource" as const }),
    ...(selected === undefined ? {} : { only: selected.only }),
    // the documents the planner will diff are read here: computePlan reads no file
    state,
  });
  return { hashKey, selected, desired };
}
