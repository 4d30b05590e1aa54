/**
 * A request the sandbox handles inside itself, without a socket (dispatch.ts runs it): what it
 * carries, what it comes to, and what traffic and batch handlers are given to send more of them.
 */
import type { Dispatcher } from "undici";
import type { IncomingHttpHeaders } from "node:http";
import { BodyTooLarge } from "../http/http-io.js";
import type { Reply } from "../http/http-io.js";
import type { SandboxDeps } from "./context.js";
import type { Turns } from "./turns.js";

/** A request handled inside the sandbox, without a socket. */
export interface DispatchRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingHttpHeaders;
  readonly body: () => Promise<Buffer>;
  /** Sent by the sandbox itself (a batch sub-request, a loopback hop): no rate limit, no latency. */
  readonly internal: boolean;
}

export type DispatchOutcome = { readonly kind: "reply"; readonly reply: Reply } | { readonly kind: "dropped" };

export interface TrafficDeps extends SandboxDeps {
  readonly selfUrl: () => string;
  /** Pool for proxying to upstreams elsewhere. */
  readonly dispatcher: Dispatcher;
  readonly maxBodyBytes: number;
  /** The sandbox's own request pipeline: batch sub-requests and hops back to itself use it. */
  dispatch: (r: DispatchRequest) => Promise<DispatchOutcome>;
  /** Paces batch sub-requests over turns of the event loop (see turns.ts). */
  readonly turns: Turns;
}

/** The bytes and headers of a reply, as they would travel over HTTP. */
export function replyBytes(reply: Reply): { body: Buffer; headers: Record<string, string> } {
  const bodiless = reply.status === 204 || reply.status === 304;
  if (reply.raw !== undefined) return { body: reply.raw, headers: { ...reply.headers } };
  const body = reply.body === undefined || bodiless ? Buffer.alloc(0) : Buffer.from(JSON.stringify(reply.body));
  return { body, headers: bodiless ? { ...reply.headers } : { "content-type": "application/json", "content-length": String(body.length), ...reply.headers } };
}

export function bounded(body: Buffer, limit: number): () => Promise<Buffer> {
  return () => (body.length > limit ? Promise.reject(new BodyTooLarge()) : Promise.resolve(body));
}
