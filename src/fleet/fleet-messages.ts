/**
 * What replicas of a fleet tell each other over PostgreSQL's LISTEN/NOTIFY, on one channel:
 *
 * - `trigger`: a webhook or `/sync` a replica received, for the environments it names; the
 *   leader of each runs it and answers
 * - `ack`: naming the trigger's nonce and the environments this replica took;
 * - `released`: a replica gave leases back (the fleet grew): the others look for them now
 *   rather than at their next tick.
 *
 * NOTIFY is never stored (a listener that is reconnecting misses it): a sender waits for the
 * acknowledgements, and a replica that gets none answers 503 so the sender delivers again. The
 * payload limit is 8000 bytes: environment names are few and short (checked by the config), a
 * trigger's trace context 55 characters.
 */
import { randomUUID } from "node:crypto";
import { channelMessage } from "../channel-message.js";
import { validTraceparent } from "../telemetry/traceparent.js";

export const fleetChannel = "gatesync_fleet";

export type FleetReason = "sync" | "webhook";

export type FleetMessage =
  | {
      readonly kind: "trigger";
      readonly schema: string;
      readonly environments: readonly string[];
      readonly reason: FleetReason;
      readonly nonce: string;
      readonly from: string;
      /** The trace the trigger's runs join (checked when sent and when heard: traceparent.ts). */
      readonly traceparent?: string;
    }
  | { readonly kind: "ack"; readonly schema: string; readonly environments: readonly string[]; readonly nonce: string; readonly from: string }
  | { readonly kind: "released"; readonly schema: string; readonly from: string };

export interface ForwardOutcome {
  /** Who took each environment (this replica's name for those it leads). */
  readonly leaders: ReadonlyMap<string, string>;
  /** Environments no leader acknowledged in time. */
  readonly missing: readonly string[];
  /** Whether the trigger went out to the fleet: false when this replica's lease connection was down (or not up yet). */
  readonly sent: boolean;
  readonly ms: number;
}

export function encodeFleetMessage(m: FleetMessage): string {
  return JSON.stringify(m);
}

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/** A message of this fleet (its schema), or undefined. */
export function decodeFleetMessage(payload: string | undefined, schema: string): FleetMessage | undefined {
  const m = channelMessage(payload, schema);
  if (m === undefined) return undefined;
  if (m.kind === "released") return m as FleetMessage;
  if (typeof m.nonce !== "string" || !strings(m.environments)) return undefined;
  if (m.kind === "ack") return m as FleetMessage;
  if (m.kind !== "trigger" || (m.reason !== "sync" && m.reason !== "webhook")) return undefined;
  // another replica's word: a trace context that is none is dropped, the trigger kept
  const { traceparent, ...trigger } = m;
  const valid = validTraceparent(traceparent);
  return { ...(trigger as Omit<Extract<FleetMessage, { kind: "trigger" }>, "traceparent">), ...(valid === undefined ? {} : { traceparent: valid }) };
}

/** Triggers waiting for the leaders of their environments, by nonce. */
export class PendingTriggers {
  private readonly waiting = new Map<string, { readonly missing: Set<string>; readonly leaders: Map<string, string>; readonly done: () => void }>();

  /**
   * Waits for acknowledgements covering `environments` (at most `timeoutMs`): who took each, and
   * which none took.
   */
  expect(
    nonce: string,
    environments: readonly string[],
    timeoutMs: number,
  ): Promise<{ readonly leaders: ReadonlyMap<string, string>; readonly missing: readonly string[] }> {
    const missing = new Set(environments);
    const leaders = new Map<string, string>();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiting.delete(nonce);
        resolve({ leaders, missing: [...missing].sort() });
      };
      const timer = setTimeout(finish, timeoutMs);
      this.waiting.set(nonce, { missing, leaders, done: finish });
      if (missing.size === 0) finish();
    });
  }

  acknowledge(nonce: string, environments: readonly string[], from: string): void {
    const w = this.waiting.get(nonce);
    if (w === undefined) return;
    for (const e of environments) {
      if (w.missing.delete(e)) w.leaders.set(e, from);
    }
    if (w.missing.size === 0) w.done();
  }

  /** Gives up on a trigger that could not be sent. */
  cancel(nonce: string): void {
    this.waiting.get(nonce)?.done();
  }
}

/** What forwarding a trigger needs of the fleet's leases. */
export interface ForwardParts {
  readonly name: string;
  readonly schema: string;
  readonly leads: (environment: string) => boolean;
  /** Runs the environments this replica leads, here. */
  readonly runHere: (environments: readonly string[]) => void;
  readonly pending: PendingTriggers;
  readonly ackTimeoutMs: number;
  /** Sends a message to the fleet; undefined while disconnected. */
  readonly send: ((m: FleetMessage) => Promise<void>) | undefined;
}

/** Has each environment's leader run a trigger (this replica those it leads) and says who took which. */
export async function forwardTrigger(
  environments: readonly string[],
  reason: FleetReason,
  traceparent: string | undefined,
  p: ForwardParts,
): Promise<ForwardOutcome> {
  const t0 = performance.now();
  const mine = environments.filter((e) => p.leads(e));
  if (mine.length > 0) p.runHere(mine);
  const leaders = new Map(mine.map((e) => [e, p.name]));
  const rest = environments.filter((e) => !leaders.has(e));
  const ms = (): number => Math.round(performance.now() - t0);
  if (rest.length === 0) return { leaders, missing: [], sent: true, ms: ms() };
  if (p.send === undefined) return { leaders, missing: rest, sent: false, ms: ms() };
  const nonce = randomUUID();
  const acked = p.pending.expect(nonce, rest, p.ackTimeoutMs);
  let sent = true;
  try {
    const trace = traceparent === undefined ? {} : { traceparent };
    await p.send({ kind: "trigger", schema: p.schema, environments: rest, reason, nonce, from: p.name, ...trace });
  } catch {
    sent = false;
    p.pending.cancel(nonce);
  }
  const answer = await acked;
  for (const [e, who] of answer.leaders) leaders.set(e, who);
  return { leaders, missing: answer.missing, sent, ms: ms() };
}
