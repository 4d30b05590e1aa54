/**
 * The recorder owns the records of one apply and the protocol that keeps "nothing created
 * twice": before a call that must not be repeated leaves, its intent is written (in doubt:
 * sent, no answer recorded), so a process killed at any moment leaves it in doubt; when the
 * call settles, its verdict replaces the intent — applied (with the server's id and answer),
 * failed (nothing new exists on the server: the previous history is restored) or in doubt.
 * A state write that fails halts the apply: a process that cannot record starts no call.
 *
 * In memory it keeps, beside the state read at the start, what later steps read: a change's
 * record until its verdict is written; after it, only the records the post-apply checks read
 * and rewrite (kinds with `postApply`); of every outcome, only what the summary reports.
 */
import { operations } from "../../contract/operations.js";
import { ErrorCode, GatesyncError, StateError } from "../../errors.js";
import type { HealthResult } from "../../kinds/kind.js";
import { knownKind } from "../../kinds/registry.js";
import type { Logger } from "../../logger.js";
import type { DesiredSet, OutgoingRequests } from "../../plan/desired.js";
import type { PlannedChange } from "../../plan/plan-change.js";
import { redact } from "../../secrets/markers.js";
import { appliedRecord } from "./applied-record.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../../record/state.js";
import type { CallOutcome } from "../http-client.js";
import type { Verdict } from "../pace/retry.js";
import type { Progress, ResourceOutcome } from "../types.js";
import { heldPayload, holdsPayload } from "../../record/wrappers/lazy-record.js";
import { withCallEvent } from "../../telemetry/spans.js";
import { describeHealth } from "../health-text.js";

export type FinalVerdict = Exclude<Verdict, { kind: "retry" }>;

export interface RecorderOptions {
  readonly state: StateBackend;
  readonly snapshot: StateSnapshot;
  readonly desired: DesiredSet;
  /** The bodies sent (ApplyInput.desired.outgoing): an answer is redacted of the secrets its body held. */
  readonly bodies: OutgoingRequests;
  readonly hashKey: string;
  readonly commit: string | undefined;
  readonly now: () => Date;
  readonly logger: Logger;
  readonly progress: Progress;
  /** Aborted when a state write fails. */
  readonly halt: AbortController;
}

/** Sending it twice equals sending it once: not a create, not an org-key write carrying a quota reset. */
export function repeatable(c: PlannedChange): boolean {
  return operations[c.operation!.name].idempotent && c.quotaReset !== true;
}

/** Whether a later step reads the record after its verdict: the post-apply checks read it and rewrite it with its health. */
const readAfterVerdict = (c: PlannedChange): boolean => knownKind(c.kind)?.postApply !== undefined;

export class Recorder {
  /** Records written in this run, over the snapshot's; undefined: settled, and not read again (see record). */
  private readonly written = new Map<string, ResourceRecord | undefined>();
  /** Changes whose intent is written and whose verdict is not. */
  private readonly intents = new Set<string>();
  /** Applied in this run, in the order they settled. */
  readonly appliedIds: string[] = [];
  /** Failed or in doubt. */
  private readonly problems: ResourceOutcome[] = [];
  /** Changes settled through batch calls. */
  viaBatch = 0;
  /** The first state write that failed (disk full, I/O error …): the apply stopped starting calls. */
  stateFailure: GatesyncError | undefined;

  constructor(private readonly opts: RecorderOptions) {}

  /**
   * The record as this apply knows it, for the steps that read it: a change's own record until
   * its verdict is written; after it, the record of a kind with post-apply checks (undefined
   * for the others: nothing reads them again in this run, and the state holds them).
   */
  record(id: string): ResourceRecord | undefined {
    return this.written.has(id) ? this.written.get(id) : this.opts.snapshot.resources.get(id);
  }

  /**
   * A create that was in doubt when this apply started, sent again and refused as a duplicate
   * (its kind's `settlesByResend`): the earlier create happened — a success, with a note. A
   * duplicate refusal of a create nothing was in doubt about stays a failure.
   */
  settledByResend(c: PlannedChange, verdict: Verdict): Verdict {
    const settle = knownKind(c.kind)?.settlesByResend;
    if (settle === undefined || c.action !== "create" || verdict.kind !== "failed" || verdict.status !== settle.status) return verdict;
    return this.opts.snapshot.resources.get(c.id)?.status === "in-doubt" ? { kind: "success", note: settle.note } : verdict;
  }

  /** Writes `record`; a direct call's write an event on the call's span (a batch's writes share a span: batchStateWrites). */
  private async write(record: ResourceRecord, viaBatch: boolean): Promise<void> {
    try {
      // on the call it records (an intent before the request leaves, the outcome once it settles); a health write, a span of its own
      const attributes = { "gatesync.resource": record.id, "gatesync.record.status": record.status };
      await (viaBatch
        ? this.opts.state.write(record)
        : withCallEvent("gatesync.state.write", record.id, attributes, async () => this.opts.state.write(record)));
    } catch (err) {
      this.opts.halt.abort();
      this.stateFailure ??=
        err instanceof GatesyncError ? err : new StateError(ErrorCode.STATE_IO, `cannot write the state: ${(err as Error).message}`, { cause: err });
      this.opts.logger.error({ resource: record.id, err: (err as Error).message }, "state write failed: no further calls");
      throw err;
    }
  }

  /**
   * The state lock is lost (another process took it): no further call, and no further write —
   * the new holder's state is not this process's to change. The apply reports it.
   */
  lockLost(err: GatesyncError): void {
    if (this.stateFailure === undefined) this.opts.logger.error({ code: err.code, err: err.message }, "state lock lost: no further calls");
    this.opts.halt.abort();
    this.stateFailure ??= err;
  }

  /** The first record of an object the state never held: failed until a call succeeds. */
  private firstRecord(c: PlannedChange): ResourceRecord {
    const t = this.opts.now().toISOString();
    return { id: c.id, kind: c.kind, name: c.name, address: this.opts.desired.find(c.id)?.request.address ?? {}, status: "failed", createdAt: t, updatedAt: t };
  }

  /** The record an outcome builds on: an intent recorded in this run (in doubt, never applied) is none. */
  private recordToBuildOn(c: PlannedChange): ResourceRecord | undefined {
    const r = this.record(c.id);
    return r?.status === "in-doubt" && !holdsPayload(r, "applied") ? undefined : r;
  }

  /** Before a call that must not be repeated: the intent, so a crash leaves it in doubt. Once per change. */
  async intent(c: PlannedChange, viaBatch: boolean): Promise<void> {
    if (repeatable(c) || this.intents.has(c.id)) return;
    this.intents.add(c.id);
    const prev = this.record(c.id);
    const d = this.opts.desired.find(c.id);
    const t = this.opts.now().toISOString();
    const record: ResourceRecord = {
      ...(prev ?? this.firstRecord(c)),
      status: "in-doubt",
      error: `sent at ${t}; no answer was recorded (the process stopped before one arrived)`,
      ...(d === undefined ? {} : { attempted: heldPayload(d.request.readCompare()) }),
      ...spentTrigger(c, d),
      updatedAt: t,
    };
    await this.write(record, viaBatch);
    // keep `prev` as the record to build on, so a success or refusal restores the true history
    if (prev === undefined) this.written.set(c.id, record);
  }

  /** A change whose intent was written but which was never sent: its previous record comes back. */
  async withdraw(c: PlannedChange): Promise<void> {
    if (!this.intents.delete(c.id)) return;
    const prev = this.recordToBuildOn(c);
    try {
      if (prev === undefined) await this.opts.state.remove(c.id);
      else await this.opts.state.write(prev);
    } catch (err) {
      this.opts.halt.abort();
      throw err;
    }
    if (prev === undefined) this.written.delete(c.id);
  }

  private applied(c: PlannedChange, outcome: CallOutcome, note: string | undefined): ResourceRecord {
    const t = this.opts.now().toISOString();
    const prev = this.record(c.id);
    if (c.action === "orphan") return { ...(prev ?? this.firstRecord(c)), status: "applied", deactivatedAt: t, updatedAt: t };
    const body = outcome.kind === "answered" ? outcome.body : undefined;
    const kind = knownKind(c.kind);
    const serverId = c.action === "create" ? kind?.serverId?.read(body) : undefined;
    const record = appliedRecord(this.opts.desired.find(c.id)!, this.recordToBuildOn(c), {
      now: t,
      ...(serverId === undefined ? {} : { serverId }),
      // the secrets of the body sent (not resolved again: an ApiDefinition's document read again)
      response: redact(body, this.opts.hashKey, kind?.secretFields ?? [], this.opts.bodies.secretsOf(c.id)),
      ...(this.opts.commit === undefined ? {} : { commit: this.opts.commit }),
      // the reset was sent with this call, or with the write in doubt this one settles (never again)
      quotaReset: c.quotaReset === true || this.resetSpent(c),
    });
    return note === undefined ? record : { ...record, note };
  }

  /** The record of a change that did not succeed: in doubt (it may have happened) or failed (it did not). */
  private failedOrInDoubt(c: PlannedChange, verdict: Exclude<FinalVerdict, { kind: "success" }>): ResourceRecord {
    const t = this.opts.now().toISOString();
    if (verdict.kind === "in-doubt") {
      const d = this.opts.desired.find(c.id);
      return {
        ...(this.record(c.id) ?? this.firstRecord(c)),
        status: "in-doubt",
        error: `outcome unknown: ${verdict.why}`,
        ...(d === undefined ? {} : { attempted: heldPayload(d.request.readCompare()) }),
        ...spentTrigger(c, d),
        updatedAt: t,
      };
    }
    // Refused, or certainly not delivered: nothing new exists on the server.
    const { attempted: _attempted, ...kept } = this.recordToBuildOn(c) ?? this.firstRecord(c);
    // a reset spent by a write in doubt before this apply stays spent
    const before = this.opts.snapshot.resources.get(c.id);
    const spent = before?.status === "in-doubt" && before.trigger !== undefined ? { trigger: before.trigger } : {};
    return { ...kept, ...spent, status: "failed", error: verdict.why, updatedAt: t };
  }

  /** The record this apply started from was in doubt with the trigger the spec still names: that reset was sent. */
  private resetSpent(c: PlannedChange): boolean {
    const before = this.opts.snapshot.resources.get(c.id);
    const trigger = this.opts.desired.find(c.id)?.request.trigger;
    return before?.status === "in-doubt" && trigger !== undefined && before.trigger === trigger;
  }

  /** Records the final verdict of one change. */
  async settle(c: PlannedChange, verdict: FinalVerdict, outcome: CallOutcome | undefined, attempts: number, viaBatch: boolean): Promise<void> {
    const httpStatus = outcome?.kind === "answered" ? outcome.status : undefined;
    const record = verdict.kind === "success" ? this.applied(c, outcome!, verdict.note) : this.failedOrInDoubt(c, verdict);
    const status = verdict.kind === "success" ? "applied" : verdict.kind;
    const message = verdict.kind === "success" ? verdict.note : verdict.why;
    const result: ResourceOutcome = {
      id: c.id,
      status,
      viaBatch,
      attempts,
      ...(message === undefined ? {} : { message }),
      ...(httpStatus === undefined ? {} : { httpStatus }),
    };
    const log = this.opts.logger.child({ resource: c.id });
    if (verdict.kind === "success")
      log.info(
        { operation: c.operation?.name, status: httpStatus, attempts, viaBatch, ...(verdict.note === undefined ? {} : { note: verdict.note }) },
        "resource applied",
      );
    else
      log.error(
        { operation: c.operation?.name, status: httpStatus, reason: verdict.why },
        verdict.kind === "in-doubt" ? "resource in doubt" : "resource failed",
      );
    let recorded = result;
    try {
      await this.write(record, viaBatch);
      if (readAfterVerdict(c)) this.written.set(c.id, record);
      // settled: read no more — only a record the snapshot holds needs hiding (a first apply of 100,000 keeps no entry each)
      else if (this.opts.snapshot.resources.has(c.id)) this.written.set(c.id, undefined);
      else this.written.delete(c.id);
      this.intents.delete(c.id);
    } catch {
      recorded = unrecorded(result, repeatable(c), record.serverId);
    }
    if (recorded.status === "applied") this.appliedIds.push(c.id);
    else this.problems.push(recorded);
    if (viaBatch) this.viaBatch++;
    this.opts.progress.done(c.id, recorded.status);
  }

  /** Records the health found by post-apply checks on an applied resource. */
  async health(result: HealthResult): Promise<void> {
    const record = this.record(result.id);
    if (record === undefined) return;
    const reason = result.ok ? {} : { reason: describeHealth(result) };
    const updated: ResourceRecord = { ...record, health: heldPayload({ ok: result.ok, checkedAt: result.checkedAt, results: result.checks, ...reason }) };
    try {
      await this.write(updated, false);
    } catch {
      return; // the apply halts: no further checks are recorded
    }
    this.written.set(result.id, updated);
  }

  byStatus(status: "failed" | "in-doubt"): ResourceOutcome[] {
    return this.problems.filter((o) => o.status === status);
  }
}

/**
 * A write carrying a quota reset whose outcome is unknown records its trigger as spent: a reset
 * may have happened, and a reset happens at most once — the next plan writes the key again
 * without it (a new trigger value sends a new one). A certain failure restores the history.
 */
function spentTrigger(c: PlannedChange, d: { readonly request: { readonly trigger?: string | undefined } } | undefined): { trigger?: string } {
  const trigger = d?.request.trigger;
  return c.quotaReset === true && trigger !== undefined ? { trigger } : {};
}

/** A call that reached the server, whose outcome the state could not record. */
function unrecorded(result: ResourceOutcome, repeatableCall: boolean, serverId: string | undefined): ResourceOutcome {
  if (result.status !== "applied") return result;
  if (repeatableCall)
    return { ...result, status: "failed", message: "applied on the server, but the state could not record it: the next apply sends it again" };
  return {
    ...result,
    status: "in-doubt",
    message: `sent and answered${serverId === undefined ? "" : ` (server id ${serverId})`}, but the state could not record it`,
  };
}
