/**
 * The apply's side of adoption: before any call, each adopted resource is recorded under its
 * server id, marked not verified. A kind without an update is recorded with the repository's
 * spec as applied (no call exists to send it); a kind with one is recorded without an applied
 * spec, and the update the plan carries then sends the spec to the adopted id.
 */
import type { DesiredSet } from "../../plan/desired.js";
import type { Plan } from "../../plan/plan.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../../record/state.js";
import { serverIdAddress } from "../../kinds/registry.js";
import { heldPayload } from "../../record/wrappers/lazy-record.js";

/** Writes the adoption records (under the apply's lock) and returns the state the executor builds on. */
export async function recordAdoptions(
  plan: Plan,
  desired: DesiredSet,
  snapshot: StateSnapshot,
  state: StateBackend,
  opts: { readonly now: string; readonly hashKeyStore: string | undefined },
): Promise<StateSnapshot> {
  const { now } = opts;
  const adopted = plan.changes.filter((c) => c.action === "adopt" && c.adopt !== undefined);
  if (adopted.length === 0) return snapshot;
  // a new state gets its lineage (and hash key) before its first record, as the executor does
  if (snapshot.serial === 0) await state.initialise(opts.hashKeyStore);
  const resources = new Map(snapshot.resources);
  for (const c of adopted) {
    const d = desired.find(c.id);
    if (d === undefined || c.adopt === undefined) continue;
    const previous = resources.get(c.id);
    const record: ResourceRecord = {
      id: c.id,
      kind: c.kind,
      name: c.name,
      address: { ...d.request.address, ...previous?.address, ...serverIdAddress(c.kind, c.adopt.serverId) },
      serverId: c.adopt.serverId,
      ...(c.operation === undefined ? { applied: heldPayload(d.request.readCompare()), appliedHash: d.hash } : {}),
      status: "applied",
      adopted: { at: previous?.adopted?.at ?? now, source: c.adopt.source, verified: false },
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
    };
    // one at a time, durably: no call, so nothing to bound
    await state.write(record);
    resources.set(c.id, record);
  }
  return { ...snapshot, resources };
}
