/**
 * What gatesync says about a write whose outcome is unknown (in doubt), per operation: every
 * hint here is a step a person will follow literally, so none of them may repeat an effect that
 * must happen at most once (a create, an org key's `reset_quota=1`). Pure text, shared by the
 * plan, the apply summary and the status page.
 */
import { operations } from "../contract/operations.js";
import type { OperationName } from "../contract/operations.js";
import { knownKind } from "../kinds/registry.js";
import type { ResourceRecord } from "../record/state.js";

/** An upsert (create and update are one idempotent write: an org key): in doubt, it is not a create. */
export function isUpsert(create: OperationName | undefined): boolean {
  return create !== undefined && operations[create].idempotent;
}

/**
 * A kind that names its objects itself, can update them and does not settle by resending: of
 * its writes only an upsert can be in doubt (its updates are repeatable: never in doubt).
 */
function kindUpserts(kind: string): boolean {
  const m = knownKind(kind);
  return m !== undefined && m.serverId === undefined && m.settlesByResend === undefined && m.noUpdate === undefined;
}

/**
 * Whether a resource of `kind` in doubt settles without anyone: its next apply writes it again
 * (an upsert). Notifications and commit statuses ask a person only for the others.
 */
export function settlesOnNextApply(kind: string): boolean {
  return kindUpserts(kind);
}

/** One command to run, and when. */
export interface ResolveStep {
  readonly when: string;
  readonly command: string;
}

/**
 * The steps that settle a resource in doubt, by its kind. `where`: the resource is still
 * declared in the repository, or left it (an orphan in doubt). `scope`: what every command needs
 * to reach the same environment (` --env NAME`; the CLI knows it), appended.
 */
export function inDoubtSteps(kind: string, id: string, where: "declared" | "orphan", scope = ""): readonly ResolveStep[] {
  const forget = `gatesync state resolve ${id} --forget${scope}`;
  if (kindUpserts(kind)) {
    // the key's write is sent again without its reset by the next apply: nothing to decide
    return where === "orphan" ? [{ when: "to stop tracking it (the key stays on the server as it is)", command: forget }] : [];
  }
  const m = knownKind(kind);
  if (m?.settlesByResend !== undefined) {
    return [
      {
        when: "it exists on the server: put the spec back as it was sent, and the next apply's create settles it (refused as a duplicate)",
        command: `gatesync apply${scope}`,
      },
      { when: "it does not exist on the server", command: forget },
    ];
  }
  return [
    { when: "it exists on the server: record the id the server shows for it", command: `gatesync state resolve ${id} --id <server id>${scope}` },
    { when: where === "orphan" ? "it does not exist: drop the record" : "it does not exist: the next apply creates it", command: forget },
  ];
}

/** The steps as one hint sentence (plans). */
export function inDoubtHint(kind: string, id: string, where: "declared" | "orphan"): string | undefined {
  const steps = inDoubtSteps(kind, id, where);
  if (steps.length === 0) return undefined;
  return `find out whether the object exists on the server — ${steps.map((s) => `${s.when}: \`${s.command}\``).join("; ")}`;
}

/** The note of an upsert in doubt planned again: its body is written again, its reset never. */
export function upsertInDoubtNote(record: ResourceRecord): string {
  const reset =
    record.trigger === undefined
      ? ""
      : `; it carried reset_quota=1 for quotaResetTrigger ${JSON.stringify(record.trigger)}, which is not sent again (a reset sent twice resets the quota twice) — only a new quotaResetTrigger value sends another`;
  return `the last write's outcome is unknown (${record.error ?? "no answer"}): the key is written again — the same write twice is the same key${reset}`;
}
