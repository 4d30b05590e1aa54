/**
 * One client per management interface, on an injected undici dispatcher (keep-alive). Every
 * call ends in one of three outcomes, which decide retries and in-doubt marking:
 * - `answered`: the server replied (any status);
 * - `not-sent`: the request certainly never reached the server (connection refused, unknown
 *   host, connect timeout);
 * - `unknown`: it may have reached the server (reset after sending, no complete answer before
 *   the call's deadline, an answer larger than the limit).
 * Each call has one deadline covering connect, headers and the whole body (an abort signal:
 * undici's own header and body timeouts are idle timers, which a server dripping one byte at
 * a time never trips), and reads at most `maxResponseBytes` of the answer. A deadline that
 * passes while this process's event loop is busy is judged after the loop has read what the
 * sockets hold: an answer that arrived in time is not taken for a server that did not answer.
 * The credential is sent in its header and never logged.
 */
import type { Dispatcher } from "undici";
import { Agent, request } from "undici";
import type { InterfaceName } from "../contract/interfaces.js";
import { InternalError } from "../errors.js";
import { AnswerTooLarge, readBoundedAnswer } from "../http/bounded-answer.js";

/** The dispatcher for the management interfaces: kept-alive connections, enough for every queue. */
export function managementDispatcher(): Agent {
  return new Agent({ keepAliveTimeout: 30_000, connections: 64 });
}

export type CallOutcome =
  | { readonly kind: "answered"; readonly status: number; readonly retryAfterMs: number | undefined; readonly body: unknown; readonly text: string }
  | { readonly kind: "not-sent"; readonly error: string }
  | { readonly kind: "unknown"; readonly error: string };

export interface CallRequest {
  readonly method: string;
  /** Path below the interface's base address, query included. */
  readonly path: string;
  readonly body?: unknown;
  /** Send without the interface credential (the batch call, API traffic). */
  readonly anonymous?: boolean;
}

/** What sends a call: an interface client, or a simulated server in tests. */
export interface Caller {
  call(req: CallRequest): Promise<CallOutcome>;
}

export interface InterfaceClientOptions {
  readonly name: InterfaceName;
  readonly baseUrl: string;
  /** Header carrying the credential, and its value. */
  readonly auth: { readonly header: string; readonly value: string };
  readonly dispatcher: Dispatcher;
  /** The deadline of one call, from its start to the end of its answer. */
  readonly timeoutMs: number;
  /** The largest answer read; beyond it the outcome is unknown. */
  readonly maxResponseBytes: number;
}

/** The reason a call's deadline aborts it with. */
class DeadlineExceeded extends Error {}

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB` : `${bytes} bytes`;
}

const notSentCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH", "ENETUNREACH"]);

/** Retry-After in seconds or as an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.ceil(Number(v) * 1000);
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Why the URL parser would send a path to another route than the one planned, or undefined: a
 * segment `.` or `..` (or written `%2e`) is removed with the one before it, a `\` is read as
 * `/`, and a `#` ends the path. Validation refuses identities that would make one
 * (schemas/common.schema.json, `pathSegment`); this is the last line, before anything is sent.
 */
export function rewrittenPath(path: string): string | undefined {
  const [route = ""] = path.split("?", 1);
  if (route.includes("#")) return "it holds `#`, which ends the path";
  if (route.includes("\\")) return "it holds `\\`, which is read as `/`";
  if (route.split("/").some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))) return "a segment is `.` or `..`, which is removed with the one before it";
  return undefined;
}

export class InterfaceClient implements Caller {
  readonly name: InterfaceName;
  private readonly base: string;

  constructor(private readonly opts: InterfaceClientOptions) {
    this.name = opts.name;
    this.base = opts.baseUrl.replace(/\/+$/, "");
  }

  async call(req: CallRequest): Promise<CallOutcome> {
    const rewritten = rewrittenPath(req.path);
    if (rewritten !== undefined) throw new InternalError(`refused to send ${req.method} ${req.path} to the ${this.name} interface: ${rewritten}`);
    const headers: Record<string, string> = { accept: "application/json" };
    if (req.anonymous !== true) headers[this.opts.auth.header] = this.opts.auth.value;
    let payload: string | null = null;
    if (req.body !== undefined) {
      payload = typeof req.body === "string" ? req.body : JSON.stringify(req.body);
      headers["content-type"] = "application/json";
    }
    const deadline = new AbortController();
    let settled = false;
    // timers run before the poll phase: once the time is up, the answers waiting in the sockets are read first
    const timer = setTimeout(() => setImmediate(() => settled || deadline.abort(new DeadlineExceeded())), this.opts.timeoutMs);
    let res: Dispatcher.ResponseData | undefined;
    try {
      res = await request(`${this.base}${req.path}`, {
        method: req.method,
        headers,
        body: payload,
        dispatcher: this.opts.dispatcher,
        signal: deadline.signal,
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
      });
      const text = await readBoundedAnswer(res.body, this.opts.maxResponseBytes, res.headers["content-length"]);
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { kind: "answered", status: res.statusCode, retryAfterMs: parseRetryAfter(res.headers["retry-after"]), body, text };
    } catch (err) {
      return this.failure(err, res?.statusCode);
    } finally {
      settled = true;
      clearTimeout(timer);
      // an answer not read to its end (cut off, timed out) must not hold its connection
      if (res !== undefined && !res.body.destroyed && !res.body.readableEnded) res.body.destroy();
    }
  }

  private failure(err: unknown, status: number | undefined): CallOutcome {
    const answered = status === undefined ? "" : ` (status ${status} arrived; its body did not)`;
    if (err instanceof AnswerTooLarge) {
      return {
        kind: "unknown",
        error: `the answer${status === undefined ? "" : ` (status ${status})`} is larger than limits.maxResponseBytes (${mib(this.opts.maxResponseBytes)}): reading stopped; outcome unknown`,
      };
    }
    if (err instanceof DeadlineExceeded) {
      return { kind: "unknown", error: `no complete answer within retries.timeoutMs (${this.opts.timeoutMs} ms)${answered}: outcome unknown` };
    }
    const code = (err as { code?: string }).code ?? "";
    const message = `${code === "" ? "" : `${code}: `}${(err as Error).message}`;
    return notSentCodes.has(code) ? { kind: "not-sent", error: message } : { kind: "unknown", error: message };
  }
}

/** Message of an error answer, in any of the interfaces' formats. */
export function answerMessage(body: unknown, text: string): string {
  if (body !== null && typeof body === "object") {
    const b = body as Record<string, unknown>;
    if (typeof b.message === "string") return b.message;
    if (typeof b.Message === "string") return b.Message;
    if (typeof b.error === "string") return b.error;
    if (Array.isArray(b.errors)) {
      return b.errors
        .map((e) =>
          typeof e === "string"
            ? e
            : typeof (e as Record<string, unknown>).detail === "string"
              ? String((e as Record<string, unknown>).detail)
              : JSON.stringify(e),
        )
        .join("; ");
    }
  }
  return text.slice(0, 300);
}
