/**
 * Triggers a standby received, carried to the leader over PostgreSQL's LISTEN/NOTIFY.
 *
 * A webhook or `POST /sync` can reach any replica (a Service selects them all), but only the
 * leader applies. A standby NOTIFYs the trigger on one channel; every replica LISTENs on its
 * election connection — the same connection that holds the leader's advisory lock, so the
 * leader is listening for as long as it is the leader — and only the leader acts on it, then
 * NOTIFYs an acknowledgement naming the trigger's nonce. The standby answers 202 only once that
 * acknowledgement is back; without one (no leader yet, the leader's connection lost, the
 * database unreachable) it answers 503 with Retry-After, so the sender delivers again
 * (GitHub and GitLab show the failed delivery and can redeliver it) — never a 202 for work
 * nobody will do.
 *
 * NOTIFY is delivered when its transaction commits, to the sessions listening at that moment,
 * and is never stored: a leader that is reconnecting misses it. That is why the standby waits
 * for the acknowledgement rather than trusting the NOTIFY. Payloads are a few dozen bytes (the
 * limit is 8000): the schema (replicas of other states share the channel), the kind, the
 * reason, a nonce, and the trigger's trace context when it carried one (55 characters).
 */
import { randomUUID } from "node:crypto";
import { channelMessage } from "../channel-message.js";
import { validTraceparent } from "../telemetry/traceparent.js";

export const triggerChannel = "gatesync_triggers";

/** The reasons a standby forwards. */
export type ForwardedReason = "sync" | "webhook";

export type RelayMessage =
  | {
      readonly kind: "trigger";
      readonly schema: string;
      readonly reason: ForwardedReason;
      readonly nonce: string;
      readonly from: string;
      /** The trace the leader's run joins (checked when sent and when heard: traceparent.ts). */
      readonly traceparent?: string;
    }
  | { readonly kind: "ack"; readonly schema: string; readonly nonce: string; readonly from: string };

export type ForwardResult = { readonly ok: true; readonly leader: string; readonly ms: number } | { readonly ok: false; readonly why: string };

export function encodeMessage(m: RelayMessage): string {
  return JSON.stringify(m);
}

/** A message of this relay for `schema`, or undefined (another schema's, or not ours). */
export function decodeMessage(payload: string | undefined, schema: string): RelayMessage | undefined {
  const m = channelMessage(payload, schema);
  if (m === undefined || typeof m.nonce !== "string") return undefined;
  if (m.kind === "ack") return m as RelayMessage;
  if (m.kind !== "trigger" || (m.reason !== "sync" && m.reason !== "webhook")) return undefined;
  // another replica's word: a trace context that is none is dropped, the trigger kept
  const { traceparent, ...trigger } = m;
  const valid = validTraceparent(traceparent);
  return { ...(trigger as Omit<Extract<RelayMessage, { kind: "trigger" }>, "traceparent">), ...(valid === undefined ? {} : { traceparent: valid }) };
}

/** Forwards waiting for their acknowledgement, by nonce. */
export class PendingAcks {
  private readonly waiting = new Map<string, (leader: string) => void>();

  /** A new nonce, and the leader's name once acknowledged (undefined after `timeoutMs`). */
  expect(timeoutMs: number): { readonly nonce: string; readonly acked: Promise<string | undefined> } {
    const nonce = randomUUID();
    const acked = new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(nonce);
        resolve(undefined);
      }, timeoutMs);
      this.waiting.set(nonce, (leader) => {
        clearTimeout(timer);
        this.waiting.delete(nonce);
        resolve(leader);
      });
    });
    return { nonce, acked };
  }

  acknowledge(nonce: string, leader: string): void {
    this.waiting.get(nonce)?.(leader);
  }
}
