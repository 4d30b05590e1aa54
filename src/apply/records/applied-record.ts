/**
 * What the state records after a call: pure functions from a desired resource and the outcome
 * to a ResourceRecord. Shared by the apply and by tests that simulate one.
 */
import type { Desired } from "../../plan/desired.js";
import { serverIdAddress } from "../../kinds/registry.js";
import { contentHash } from "../../kinds/canonical.js";
import type { ResourceRecord } from "../../record/state.js";
import { heldPayload } from "../../record/wrappers/lazy-record.js";

export interface AppliedOutcome {
  readonly now: string;
  readonly serverId?: string;
  /** The server's answer, already redacted. */
  readonly response?: unknown;
  readonly commit?: string;
  /** A quota reset was sent with this call. */
  readonly quotaReset?: boolean;
}

/** The record of a successful call: the desired request becomes the applied one. */
export function appliedRecord(d: Desired, previous: ResourceRecord | undefined, outcome: AppliedOutcome): ResourceRecord {
  // Fields the update ignores keep their previous applied value: the server did not change them.
  const applied: Record<string, unknown> = { ...d.request.readCompare() };
  const previousApplied = d.request.ignoredByUpdate === undefined ? undefined : previous?.applied?.read();
  for (const field of d.request.ignoredByUpdate ?? []) {
    if (previousApplied !== undefined) {
      if (field in previousApplied) applied[field] = previousApplied[field];
      else delete applied[field];
    }
  }
  const serverId = outcome.serverId ?? previous?.serverId;
  const address = { ...d.request.address, ...previous?.address, ...(serverId === undefined ? {} : serverIdAddress(d.kind, serverId)) };
  const trigger = outcome.quotaReset === true ? d.request.trigger : previous?.trigger;
  return {
    id: d.id,
    kind: d.kind,
    name: d.name,
    address,
    ...(serverId === undefined ? {} : { serverId }),
    applied: heldPayload(applied),
    appliedHash: contentHash(applied),
    ...(trigger === undefined ? {} : { trigger }),
    ...(outcome.response === undefined ? {} : { response: heldPayload(outcome.response) }),
    ...(outcome.commit === undefined ? (previous?.commit === undefined ? {} : { commit: previous.commit }) : { commit: outcome.commit }),
    status: "applied",
    // the names its object had: kept across every rewrite (rename-lineage.ts)
    ...(previous?.renames === undefined ? {} : { renames: previous.renames }),
    createdAt: previous?.createdAt ?? outcome.now,
    updatedAt: outcome.now,
  };
}
