/** Small HTTP helpers for the sandbox and the daemon's server: bounded body reading, JSON answers, listen errors. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ConfigError, ErrorCode } from "../errors.js";
import { nestingDepth } from "../load/yaml-reader.js";
import { readBoundedBytes } from "./bounded-answer.js";

export class BodyTooLarge extends Error {}

/** Reads the whole body, refusing (BodyTooLarge) past `limit` bytes without buffering the rest; the request is left open for the 413. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return readBoundedBytes(req, limit, req.headers["content-length"], () => new BodyTooLarge());
}

export type Parsed = { ok: true; value: unknown } | { ok: false };

/**
 * Parses JSON. A document nested deeper than `maxDepth` is refused like an oversized one
 * (BodyTooLarge, answered 413), not as malformed.
 */
export function parseJson(body: Buffer, maxDepth: number): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch (err) {
    if (err instanceof RangeError) throw new BodyTooLarge();
    return { ok: false };
  }
  if (nestingDepth(value, maxDepth) > maxDepth) throw new BodyTooLarge();
  return { ok: true, value };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Raw body (proxied answers), sent as is. */
  readonly raw?: Buffer;
}

export function writeReply(res: ServerResponse, reply: Reply): void {
  if (reply.raw !== undefined) {
    res.writeHead(reply.status, reply.headers);
    res.end(reply.raw);
    return;
  }
  const bodiless = reply.status === 204 || reply.status === 304;
  const payload = reply.body === undefined || bodiless ? "" : JSON.stringify(reply.body);
  res.writeHead(
    reply.status,
    bodiless ? { ...reply.headers } : { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...reply.headers },
  );
  res.end(payload);
}

/**
 * A deadline for the client to take its whole answer: one that does not read it (a slow or
 * hostile client) is cut off, so the answer's bytes and the connection do not stay held.
 */
export function answerDeadline(res: ServerResponse, ms: number): void {
  const timer = setTimeout(() => res.destroy(), ms);
  timer.unref();
  // handed whole to the kernel ("finish"), the answer no longer holds the process's memory,
  // and a kept-alive connection serves the client's next request
  res.once("finish", () => clearTimeout(timer));
  res.once("close", () => clearTimeout(timer));
}

/** A listen failure the operator can fix, said as such (other failures pass through). */
export function listenError(listen: string, err: NodeJS.ErrnoException, hint: string): Error {
  const why: Record<string, string> = {
    EADDRINUSE: "another process is listening there",
    EACCES: "this user may not listen there (ports below 1024 need privileges)",
    EADDRNOTAVAIL: "no interface of this machine has that address",
    ENOTFOUND: "the host name does not resolve",
  };
  const reason = err.code === undefined ? undefined : why[err.code];
  if (reason === undefined) return err;
  return new ConfigError(ErrorCode.CONFIG_INVALID, `cannot listen on ${listen}: ${reason} (${err.code})`, { hint, cause: err });
}
