/**
 * The stages of a run up to its plan (run-stages.ts calls them in order): the IO around the pure
 * planner. The record is read explicitly — the heads first, then the payloads the prepared
 * desired set says the plan reads — so the state never calls back into the planner.
 */
import { ValidationFailed, hasErrors } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { inRepository, repositoryPrefix } from "../source/repository-path.js";
import type { Resource } from "../kinds/resource.js";
import { registerCredentials } from "../config/credentials.js";
import { runSecretSource } from "../source/secret-roots.js";
import type { StateSnapshot } from "../record/state.js";
import { planScope } from "../plan/plan-scope.js";
import { emptyRequest, isSelective, scopeOf } from "../select/selection.js";
import type { Scope } from "../select/selection.js";
import { SecretResolver } from "../secrets/resolver.js";
import { hashKeyFor } from "../secrets/hash-key.js";
import type { DesiredSet, OutgoingRequests } from "../plan/desired.js";
import { prepareDesired } from "../plan/prepare-desired.js";
import { noSecrets } from "../plan/outgoing.js";
import { payloadsNeeded } from "../plan/decide-change.js";
import type { Plan } from "../plan/plan.js";
import type { OwnershipView } from "../plan/ownership-check.js";
import { computePlan } from "../plan/plan.js";
import { invocationOf } from "../printed-commands.js";
import { rulesetsOf } from "../rules/prepare-rules.js";
import { batchRouteOf, valuesOptionsOf } from "../config/environments.js";
import { tracedPlan, tracedValidation } from "./plan-spans.js";
import { asShown, planOptions } from "./plan-shown.js";
import type { PlanRun, PlanRunInput } from "./run-types.js";

/** What the first stage sets up for the others: the run's one secret resolver, its selection, its rules, the repository's prefix. */
export interface RunContext {
  readonly secrets: SecretResolver;
  readonly appTypeProviders: ReadonlySet<number>;
  readonly scope: Scope | undefined;
  readonly rules: Awaited<ReturnType<typeof rulesetsOf>>;
  readonly prefix: string;
}

/** The repository as validated: its resources, and what was found in it (no error: an error stops the run). */
export interface Validated {
  readonly resources: readonly Resource[];
  readonly warnings: number;
  readonly ruleFindings: readonly Diagnostic[];
}

/** The hash key, the selection and the desired set, against one reading of the state. */
export interface Prepared {
  readonly hashKey: { readonly key: string; readonly store: string | undefined };
  readonly selected: ReturnType<typeof planScope> | undefined;
  readonly desired: DesiredSet;
}

/** What the plan is made from, and all the run keeps of the repository from here on. */
export type PlanInputs = Prepared & Pick<Validated, "resources" | "warnings" | "ruleFindings">;

/** The refusal of a repository with errors, its files named from the repository's root (`prefix`). */
function refused(prefix: string, diagnostics: readonly Diagnostic[]): ValidationFailed {
  return new ValidationFailed(inRepository(diagnostics, prefix));
}

/** Credentials registered (their values redacted from here on), the run's secret resolver, its selection and rules. */
export async function credentialsAndSecrets(input: PlanRunInput): Promise<RunContext> {
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
  return { secrets, appTypeProviders, scope, rules, prefix: repositoryPrefix(input.root, input.boundary) };
}

/** The repository loaded and validated as the run needs it, in its `gatesync.validate` span; errors refuse the run. */
export async function validate(input: PlanRunInput, ctx: RunContext): Promise<Validated> {
  const { config } = input;
  const run = async (): Promise<Awaited<ReturnType<PlanRunInput["validator"]["validate"]>>> =>
    input.validator.validate({
      ...(ctx.rules === undefined ? {} : { rules: ctx.rules }),
      root: input.root,
      ...(input.boundary === undefined ? {} : { boundary: input.boundary }),
      repositoryPrefix: ctx.prefix,
      limits: config.limits,
      ...valuesOptionsOf(config),
      ...batchRouteOf(config),
      appTypeProviders: ctx.appTypeProviders,
      ...(input.printsDocuments === true ? { printsDocuments: true } : {}),
      // a selection needs only its own secrets: the others' are checked when they are prepared
      secrets: { source: ctx.secrets, missing: ctx.scope !== undefined ? "warning" : "error" },
    });
  const validated = await (input.traced === false ? run() : tracedValidation(run));
  if (hasErrors(validated.diagnostics)) throw refused(ctx.prefix, validated.diagnostics);
  return { resources: validated.resources, warnings: validated.diagnostics.length, ruleFindings: validated.diagnostics.filter((d) => d.rule !== undefined) };
}

/** The state's records: without their payloads when only those the plan reads will be (PlanRunInput.payloads), else whole. */
export function readHeads(input: PlanRunInput): Promise<StateSnapshot> {
  return input.payloads === "needed" ? input.state.readHeads() : input.state.read();
}

/** The hash key, the selection and the desired set, against `state`; a desired set with errors refuses the run. */
export function prepare(input: PlanRunInput, ctx: RunContext, resources: readonly Resource[], state: StateSnapshot): Prepared {
  const hashKey = hashKeyFor(input.env, state.hashKey);
  const selected = ctx.scope === undefined ? undefined : planScope(resources, state, ctx.scope, input.config.selector);
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
  if (hasErrors(desired.diagnostics)) throw refused(ctx.prefix, desired.diagnostics);
  return { hashKey, selected, desired };
}

/**
 * The payloads the plan reads (`payloadsNeeded`: the desired set prepared from the heads says
 * which), read explicitly; a state read whole already is the state. A state written since its
 * heads were read comes back whole, at its new version (record/state.ts `movedSince`).
 */
export async function readPayloads(input: PlanRunInput, heads: StateSnapshot, desired: DesiredSet): Promise<StateSnapshot> {
  if (input.payloads !== "needed") return heads;
  return input.state.readPayloads(heads, payloadsNeeded(desired.desired, heads));
}

/** A plan-only run sends nothing. */
const noOutgoing: OutgoingRequests = { read: () => undefined, secretsOf: () => noSecrets };

/** What the run keeps: a plan only (PlanRunInput.keep) lets go of the resources and the bodies they would make. */
export function planInputs(input: PlanRunInput, validated: Validated, prepared: Prepared): PlanInputs {
  const planOnly = input.keep === "plan";
  return {
    ...prepared,
    desired: planOnly ? { ...prepared.desired, outgoing: noOutgoing } : prepared.desired,
    resources: planOnly ? [] : validated.resources,
    warnings: validated.warnings,
    ruleFindings: validated.ruleFindings,
  };
}

/** A saved plan whose deactivations were reviewed (made with --allow-mass-deactivation, or under the guard's share): the digest holds the run to them. */
function reviewedSaved(saved: Plan | undefined): boolean {
  return saved !== undefined && saved.summary.deactivate > 0 && saved.massDeactivation === undefined;
}

/**
 * The plan (`computePlan`, pure: no IO, no lookup), in its `gatesync.plan` span, as gatesync shows
 * it. `saved`: the saved plan an apply checks this one against (its reviewed deactivations are allowed);
 * `ownership`: the registry's rows (readOwnership), each change checked against them.
 */
export async function computeThePlan(
  input: PlanRunInput,
  ctx: RunContext,
  kept: PlanInputs,
  state: StateSnapshot,
  saved: Plan | undefined,
  ownership: OwnershipView | undefined,
): Promise<PlanRun> {
  const commit = await input.commit;
  const options = planOptions(
    reviewedSaved(saved) ? { ...input, allowMassDeactivation: true } : input,
    kept.hashKey.key,
    kept.selected?.plan,
    commit,
    ownership,
  );
  const compute = (): Plan => computePlan(kept.desired.desired, state, options);
  const plan = input.traced === false ? compute() : tracedPlan(compute);
  const { desired, resources, hashKey, warnings, ruleFindings } = kept;
  const shown = asShown(plan, input.invocation ?? invocationOf(input.config), ctx.prefix);
  return { plan: shown, state, resources, desired, hashKey, warnings, ruleFindings, ...(ownership === undefined ? {} : { ownershipRead: ownership }) };
}
