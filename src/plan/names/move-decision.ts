/** What the planner decides of a desired resource's record name (renames.ts, returns.ts): moved, blocked, or a note. */
import type { ResourceRecord } from "../../record/state.js";

export type MoveDecision =
  /** The record of `from` moves to the desired resource's name. */
  | {
      readonly action: "move";
      readonly from: ResourceRecord;
      readonly declared: boolean;
      /** An earlier name of the record comes back (returns.ts). */
      readonly returned?: true;
      readonly note: string;
    }
  | { readonly action: "blocked"; readonly reason: string; readonly hint: string }
  /** The annotation changes nothing (the move is done, or there is nothing to move): said in a note. */
  | { readonly action: "note"; readonly note: string };
