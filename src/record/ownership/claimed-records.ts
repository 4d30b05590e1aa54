/** The claims an apply writes with their records (StateBackend.writeClaiming), each record checked before the transaction. */
import { InternalError } from "../../errors.js";
import { recordProblem } from "../state.js";
import type { ClaimedRecord, ResourceRecord } from "../state.js";
import { keyOf } from "./ownership.js";
import type { OwnershipClaim, OwnershipRow } from "./ownership.js";

/** The claims of `entries`, each record checked first (an invalid record is a bug: nothing is written). */
export function checkedClaims(entries: readonly ClaimedRecord[]): OwnershipClaim[] {
  for (const e of entries) {
    const problem = recordProblem(e.record);
    if (problem !== undefined) throw new InternalError(`refusing to write an invalid record: ${problem}`);
  }
  return entries.map((e) => e.claim);
}

/** The records of the claims `rows` (the registry after the claims) gives to their claimant: a lost claim's record is not written. */
export function wonRecords(entries: readonly ClaimedRecord[], rows: readonly OwnershipRow[]): ResourceRecord[] {
  const owners = new Map(rows.map((r) => [keyOf(r), r]));
  return entries
    .filter((e) => {
      const row = owners.get(keyOf(e.claim));
      return row !== undefined && row.owner === e.claim.owner && row.environment === e.claim.environment;
    })
    .map((e) => e.record);
}
