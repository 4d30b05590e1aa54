/**
 * Adoption: an object made by hand before gatesync managed it (a product, a portal webhook, LLM
 * settings, a dashboard webhook) is recorded under its server id instead of being created
 * again. Declared in the repository with the annotation `gatesync.dev/adopt: "<server id>"`
 * (so the merge request shows it), or by `gatesync state adopt Kind/name --id ID`.
 *
 * The interfaces cannot read, so an adoption is never verified by looking: kinds that can be
 * updated get the repository's spec sent to the adopted id at the next apply (an accepted
 * update marks the record verified); for kinds that cannot, the apply records the spec as
 * applied without a call and the plan says the object's current content is unknown.
 */
import type { OperationName } from "../../contract/operations.js";
import { operations } from "../../contract/operations.js";
import { aKind, isAdoptable, serverIdAddress } from "../../kinds/registry.js";
import type { Desired } from "../desired.js";
import { holdsPayload } from "../../record/wrappers/lazy-record.js";
import type { ResourceRecord, StateSnapshot } from "../../record/state.js";

import { adoptAnnotation } from "./adopt-annotation.js";

export type AdoptionDecision =
  | {
      readonly action: "adopt";
      readonly serverId: string;
      readonly source: "repository" | "command";
      readonly address: Readonly<Record<string, string>>;
      readonly update?: OperationName;
      readonly note: string;
    }
  | { readonly action: "blocked"; readonly reason: string; readonly hint: string };

/** Which resources claim each server id (`Kind\0id`): recorded ones and annotated ones. */
export type AdoptionClaims = ReadonlyMap<string, readonly string[]>;

const claimKey = (kind: string, serverId: string): string => `${kind}\0${serverId}`;

export function adoptionClaims(desired: readonly Desired[], state: StateSnapshot): AdoptionClaims {
  const claims = new Map<string, string[]>();
  const add = (kind: string, serverId: string, id: string): void => {
    const list = claims.get(claimKey(kind, serverId)) ?? [];
    if (!list.includes(id)) list.push(id);
    claims.set(claimKey(kind, serverId), list);
  };
  for (const r of state.resources.values()) if (r.serverId !== undefined) add(r.kind, r.serverId, r.id);
  for (const d of desired) if (d.adopt !== undefined) add(d.kind, d.adopt, d.id);
  return claims;
}

/** Other resources that already hold `serverId` of this kind. */
export function otherClaims(claims: AdoptionClaims, kind: string, serverId: string, id: string): string[] {
  return (claims.get(claimKey(kind, serverId)) ?? []).filter((x) => x !== id).sort();
}

const forgetHint = (id: string): string =>
  `remove the \`${adoptAnnotation}\` annotation, or \`gatesync state resolve ${id} --forget\` first if the record is wrong`;

/** What the plan does about adoption for one resource; undefined when adoption plays no part. */
export function planAdoption(d: Desired, record: ResourceRecord | undefined, claims: AdoptionClaims): AdoptionDecision | undefined {
  const wanted = d.adopt;
  if (wanted !== undefined && wanted.trim() === "")
    return {
      action: "blocked",
      reason: `the \`${adoptAnnotation}\` annotation gives no server id`,
      hint: "write the object's id as the server shows it, or remove the annotation",
    };
  if (record !== undefined && holdsPayload(record, "applied")) {
    if (wanted === undefined || record.serverId === wanted) return undefined;
    return {
      action: "blocked",
      reason: `the annotation adopts server id ${wanted}, but the state records this resource with server id ${record.serverId ?? "(none)"}`,
      hint: forgetHint(d.id),
    };
  }
  const serverId = record?.adopted !== undefined ? record.serverId : wanted;
  if (serverId === undefined) return undefined;
  const specId = upsertedId(d);
  if (specId !== undefined) return adoptUpserted(d, serverId, specId, claims);
  const create = d.request.create;
  if (!isAdoptable(d.kind) || create === undefined || operations[create].idempotent) {
    return {
      action: "blocked",
      reason: `${d.kind} cannot be adopted here: gatesync never creates this object, it addresses it by the id in its spec`,
      hint: `remove the \`${adoptAnnotation}\` annotation`,
    };
  }
  const others = otherClaims(claims, d.kind, serverId, d.id);
  if (others.length > 0) {
    return {
      action: "blocked",
      reason: `server id ${serverId} is already recorded or adopted for ${others.join(", ")}: one object cannot be two resources`,
      hint: forgetHint(d.id),
    };
  }
  const update = d.request.update;
  const note =
    update === undefined
      ? `adopted: server id ${serverId}, not verified; its current content is unknown (the interfaces can neither read nor update it), so the repository's spec is recorded as applied without a call — if the object differs, change it by hand`
      : `adopted: server id ${serverId}, not verified; the repository's spec is sent to it (an accepted update verifies the id)`;
  return {
    action: "adopt",
    serverId,
    source: record?.adopted?.source ?? "repository",
    address: { ...d.request.address, ...record?.address, ...serverIdAddress(d.kind, serverId) },
    ...(update === undefined ? {} : { update }),
    note,
  };
}

/**
 * The id a kind whose create is an idempotent upsert addressed by the spec's own id (an org
 * key: `POST /gw/org/keys/{keyID}`) writes to; undefined for every other kind. Such an object
 * cannot be adopted under another id, but the annotation may declare that the one at the
 * spec's id already exists (as Terraform's import block does): the write is then an update.
 */
function upsertedId(d: Desired): string | undefined {
  const { create, update, address } = d.request;
  if (create === undefined || create !== update || !operations[create].idempotent) return undefined;
  const params = [...operations[create].path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "");
  const ids = params.map((p) => address[p]).filter((v): v is string => v !== undefined);
  return ids.length === 1 ? ids[0] : undefined;
}

function adoptUpserted(d: Desired, serverId: string, specId: string, claims: AdoptionClaims): AdoptionDecision {
  const update = d.request.update;
  if (serverId !== specId || update === undefined) {
    return {
      action: "blocked",
      reason: `the \`${adoptAnnotation}\` annotation gives ${JSON.stringify(serverId)}, but ${aKind(d.kind)} is written to its spec's own id ${JSON.stringify(specId)} (${d.request.create === undefined ? "" : operations[d.request.create].path}): it can only be taken as existing under that id`,
      hint: `set \`${adoptAnnotation}: "${specId}"\` to take the object at the spec's id as existing, or remove the annotation (the spec's id chooses the object)`,
    };
  }
  const others = otherClaims(claims, d.kind, serverId, d.id);
  if (others.length > 0) {
    return {
      action: "blocked",
      reason: `server id ${serverId} is already recorded or adopted for ${others.join(", ")}: one object cannot be two resources`,
      hint: forgetHint(d.id),
    };
  }
  return {
    action: "adopt",
    serverId,
    source: "repository",
    address: { ...d.request.address },
    update,
    note: `adopted: the object at id ${serverId} is taken as existing, not verified; the write by that id is an in-place update that replaces its content with the repository's spec`,
  };
}
