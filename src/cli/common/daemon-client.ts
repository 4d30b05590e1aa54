/**
 * The CLI's one way to ask a running daemon: a plan's `GET /state` and `GET /config` (with the
 * state token), `gatesync promote` and `rollback`'s `POST /environments/NAME/promote` (with the
 * promotion token). The address is checked before anything is sent, the token joins the
 * redaction layer, and the answer is bounded in time and in bytes: whatever answers at that
 * address (a proxy's error page, a stranger) costs a bounded wait and bounded memory, and a
 * failure to reach it is STATE_UNREACHABLE with what the caller says to check.
 */
import { ErrorCode, StateError, UsageError } from "../../errors.js";
import { registerSecret } from "../../secrets/redaction.js";
import { AnswerTooLarge, readBoundedAnswer } from "../../http/bounded-answer.js";

export interface DaemonRequest {
  readonly token: string;
  /** A JSON body, sent with POST; none: GET. */
  readonly body?: object;
  /**
   * The longest the whole exchange may take, its answer's body included: a server that trickles
   * a byte now and then (each within undici's own pause limits) is cut off all the same.
   */
  readonly timeoutMs: number;
  /** The largest answer read; past it the answer is dropped, said. */
  readonly maxBytes: number;
  /** What went wrong, as the caller names the request and what to check (a StateError STATE_UNREACHABLE). */
  readonly unreachable: (why: string) => StateError;
}

export interface DaemonAnswer {
  readonly status: number;
  readonly text: string;
}

/** The daemon's address as given (`--state-url`, `--daemon` or their variable): an http(s) URL, else a UsageError naming `flag`. */
export function daemonAddress(text: string, flag: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:"))
    throw new UsageError(
      `${flag} ${JSON.stringify(text.slice(0, 200))} is not an http(s) URL`,
      "give the daemon's address, e.g. https://gatesync.internal:9464",
    );
  return url;
}

/** Sends one request to the daemon at `url`; the answer's status and text, at most `maxBytes`. */
export async function askDaemon(url: URL, request: DaemonRequest): Promise<DaemonAnswer> {
  registerSecret(request.token);
  // the HTTP client is loaded only by the commands that ask a daemon
  const { request: send } = await import("undici");
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const late = `no whole answer within ${request.timeoutMs / 1000} s`;
  const headers: Record<string, string> = { authorization: `Bearer ${request.token}`, accept: "application/json" };
  let res;
  try {
    res = await send(url, {
      method: request.body === undefined ? "GET" : "POST",
      headers: request.body === undefined ? headers : { ...headers, "content-type": "application/json" },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: deadline,
    });
  } catch (err) {
    throw request.unreachable(deadline.aborted ? late : (err as Error).message);
  }
  try {
    return { status: res.statusCode, text: await readBoundedAnswer(res.body, request.maxBytes) };
  } catch (err) {
    if (err instanceof AnswerTooLarge) throw request.unreachable(`its answer is larger than the ${request.maxBytes} bytes read`);
    throw request.unreachable(deadline.aborted ? late : `its answer broke off: ${(err as Error).message}`);
  }
}

/** STATE_UNREACHABLE: `what` failed, why, and what to check. */
export const unreachableError = (what: string, why: string, hint: string): StateError =>
  new StateError(ErrorCode.STATE_UNREACHABLE, `${what}: ${why}`, { hint });
