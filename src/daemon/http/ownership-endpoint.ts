/**
 * `GET /environments/NAME/ownership` (the implicit environment's `/ownership`): the ownership
 * registry's rows of the environment's targets (docs/user/teams.md), for a merge-request job's
 * `validate` and `plan` against the daemon (`--state-url`): they refuse another owner's object
 * as the daemon's run will, without a connection to its database. Guarded by the state token, as
 * `GET /state` is; a row holds an object's identity, its owner, environment and resource name —
 * no secret. Rows of any other target are never served.
 */
import type { GatesyncConfig } from "../../config/config.js";
import { claimantOf } from "../../config/environments.js";
import type { Reply } from "../../http/http-io.js";
import type { OwnershipRegistry, OwnershipRow } from "../../record/ownership/ownership.js";
import { ownershipTargets } from "../../run/ownership-stages.js";

/** What the route answers: who the environment's runs claim as, and the rows of its targets. */
export interface OwnershipAnswer {
  readonly owner: string;
  readonly environment: string;
  readonly rows: readonly OwnershipRow[];
}

/** The registry's rows of this (effective) config's targets, and its claimant. */
export async function ownershipAnswer(config: GatesyncConfig, registry: Pick<OwnershipRegistry, "rowsOf">): Promise<OwnershipAnswer> {
  const targets = Object.entries(ownershipTargets(config)).map(([i, url]) => ({ interface: i, url }));
  return { ...claimantOf(config), rows: await registry.rowsOf(targets) };
}

/** The answer, past the state token (the route table checks it first: http/credentials.ts). */
export async function handleOwnershipRead(read: () => Promise<OwnershipAnswer>): Promise<Reply> {
  return { status: 200, body: await read(), headers: { "cache-control": "no-store" } };
}
