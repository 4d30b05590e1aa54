import { prepareDesired } from "../../src/plan/prepare-desired.js";
import type { Desired, DesiredSet } from "../../src/plan/desired.js";
import { computePlan } from "../../src/plan/plan.js";
import type { Plan, PlanOptions } from "../../src/plan/plan.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { SecretResolver } from "../../src/secrets/resolver.js";
import { appliedRecord } from "../../src/apply/records/applied-record.js";
import { movesRecord } from "../../src/plan/plan-change.js";
import { renamedRecord } from "../../src/record/lineage/rename-lineage.js";
import type { ResourceRecord, StateSnapshot } from "../../src/record/state.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { doc } from "./resources.js";
import { tempRepo } from "./temp-repo.js";

const validator = new RepositoryValidator();
export const hashKey = "test-hash-key";
export const planOptions: PlanOptions = { orphans: "report", now: "2026-11-21T00:00:00.000Z" };

export const emptyState: StateSnapshot = { lineage: "lineage-1", serial: 0, hashKey, resources: new Map() };

/** Validates files in a temp repository and prepares the desired set; fails on any error. */
export async function desiredFrom(
  files: Record<string, string>,
  opts: { env?: Record<string, string>; appTypeProviders?: number[]; hashKey?: string; printsDocuments?: boolean } = {},
): Promise<DesiredSet> {
  const dir = await tempRepo(files);
  // one resolver for validation and the desired set, as a run has (each reference looked up once)
  const secrets = new SecretResolver(new EnvFileSecretSource(opts.env ?? {}, dir));
  const result = await validator.validate({
    root: dir,
    secrets: { source: secrets, missing: "error" },
    appTypeProviders: new Set(opts.appTypeProviders ?? []),
    ...(opts.printsDocuments === true ? { printsDocuments: true } : {}),
  });
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(JSON.stringify(errors, null, 2));
  const set = prepareDesired(result.resources, { secrets, hashKey: opts.hashKey ?? hashKey, appTypeProviders: new Set(opts.appTypeProviders ?? []) });
  if (set.diagnostics.length > 0) throw new Error(JSON.stringify(set.diagnostics, null, 2));
  return set;
}

export function stateOf(records: ResourceRecord[], serial = records.length): StateSnapshot {
  return { lineage: "lineage-1", serial, hashKey, resources: new Map(records.map((r) => [r.id, r])) };
}

/** The state after every executable change of the plan succeeded (creates get a server id). */
export function recordPlan(plan: Plan, desired: readonly Desired[], state: StateSnapshot): StateSnapshot {
  const byId = new Map(desired.map((d) => [d.id, d]));
  const resources = new Map(state.resources);
  for (const c of plan.changes) {
    const d = byId.get(c.id);
    // a rename: the record moves to the new name before its update (as recordMoves does), its lineage told
    const from = movesRecord(c) ? resources.get(c.moved!.from) : undefined;
    if (from !== undefined && !resources.has(c.id)) {
      resources.delete(from.id);
      resources.set(c.id, renamedRecord(from, c, planOptions.now, plan.commit));
    }
    const previous = resources.get(c.id);
    if ((c.action === "create" || c.action === "update") && d !== undefined) {
      resources.set(
        c.id,
        appliedRecord(d, previous, {
          now: planOptions.now,
          ...(c.action === "create" ? { serverId: `srv-${c.name}` } : {}),
          quotaReset: c.quotaReset === true,
        }),
      );
    } else if (c.action === "orphan" && c.deactivate === true && previous !== undefined) {
      resources.set(c.id, { ...previous, deactivatedAt: planOptions.now });
    }
  }
  return { ...state, serial: state.serial + 1, resources };
}

export function planFor(set: DesiredSet, state: StateSnapshot = emptyState, options: Partial<PlanOptions> = {}): Plan {
  return computePlan(set.desired, state, { ...planOptions, ...options });
}

// `doc` lives with the other resource builders; the plan tests have always imported it from here
export { doc };

export const petstore = doc(
  "ApiDefinition",
  "petstore",
  `apiId: petstore-v1
query: { listenPath: /petstore/ }
definition:
  openapi: 3.0.3
  info: { title: Petstore, version: "1" }
  paths: {}
  x-gw-api-gateway:
    { info: { name: Petstore, state: { active: true } }, upstream: { url: "http://petstore.internal" }, server: { listenPath: { value: /petstore/ } } }`,
);
