/**
 * Operation 4, the batch route `{listen_path}/gw/batch/`: the body decoded as Go's
 * `encoding/json` decodes it, every sub-request built before any is sent, then each sent
 * through the gateway's own traffic path (in-process), in parallel or in array order.
 */
import { posix } from "node:path";
import PQueue from "p-queue";
import type { Reply } from "../../http/http-io.js";
import type { HandlerContext } from "../context.js";
import { batchBody } from "../interface-description.js";
import type { Json } from "../store.js";
import { bounded, replyBytes } from "../in-sandbox-request.js";
import type { DispatchOutcome, TrafficDeps } from "../in-sandbox-request.js";
import { decodeWire, firstJsonValue } from "../wire.js";

interface SubRequest {
  readonly method: string;
  readonly relative_url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly url: URL;
}

const malformed: Reply = { status: 400, body: { status: "error", message: "Batch request malformed" } };
const creationFailed: Reply = { status: 400, body: { status: "error", message: "Batch request creation failed , request structure malformed" } };
/** An HTTP method token (RFC 9110): what Go's http.NewRequest accepts. */
const methodToken = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// eslint-disable-next-line no-control-regex -- control characters are what Go's url.Parse refuses
const controlCharacter = /[\u0000-\u001f\u007f]/;
const badEscape = /%(?![0-9A-Fa-f]{2})/;

/** Go-style canonical header name: content-type → Content-Type. */
function canonical(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
}

type Decoded = { readonly requests: SubRequest[]; readonly sequential: boolean } | { readonly reply: Reply };

interface WireRequest {
  method?: string | null;
  relative_url?: string | null;
  headers?: Record<string, string | null> | null;
  body?: string | null;
}

/**
 * The sub-request as Go's http.NewRequest builds it (undefined: it cannot be built). An unclean
 * path (a leading `/` in relative_url gives `//`) meets the router's redirect, which the
 * batch's HTTP client follows as Go's does: a method other than GET or HEAD becomes GET, without a body.
 */
function build(r: WireRequest | null, self: string, listenPath: string): SubRequest | undefined {
  const method = r?.method === undefined || r.method === null || r.method === "" ? "GET" : r.method;
  const relative = r?.relative_url ?? "";
  if (!methodToken.test(method) || controlCharacter.test(relative)) return undefined;
  const [beforeFragment = "", fragment = ""] = relative.split(/#(.*)/s);
  const queryAt = beforeFragment.indexOf("?");
  const pathPart = queryAt < 0 ? beforeFragment : beforeFragment.slice(0, queryAt);
  const query = queryAt < 0 ? "" : beforeFragment.slice(queryAt);
  if (badEscape.test(pathPart) || badEscape.test(fragment)) return undefined;
  const rawPath = `/${listenPath.replace(/^\/+|\/+$/g, "")}/${pathPart}`;
  const cleaned = posix.normalize(rawPath);
  const redirected = cleaned !== rawPath && method !== "GET" && method !== "HEAD";
  const headers = Object.fromEntries(Object.entries(r?.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v ?? ""]));
  let url: URL;
  try {
    url = new URL(`${self}${cleaned}${query}`);
  } catch {
    return undefined;
  }
  return { method: redirected ? "GET" : method, relative_url: relative, headers, body: redirected ? "" : (r?.body ?? ""), url };
}

function decode(text: string, self: string, listenPath: string, maxDepth: number): Decoded {
  const first = firstJsonValue(text, maxDepth);
  if (!first.ok) return { reply: malformed };
  const decoded = decodeWire(first.value, batchBody, { foldCase: true });
  if (!decoded.ok) return { reply: malformed };
  const value = decoded.value as { requests?: Array<WireRequest | null> | null; suppress_parallel_execution?: boolean | null } | null;
  const requests: SubRequest[] = [];
  for (const r of value?.requests ?? []) {
    const sub = build(r, self, listenPath);
    if (sub === undefined) return { reply: creationFailed };
    requests.push(sub);
  }
  return { requests, sequential: value?.suppress_parallel_execution === true };
}

/** One sub-request through the gateway's traffic path, on a turn of its own (turns.ts); a failure below HTTP is an anonymous empty item. */
async function run(sub: SubRequest, deps: TrafficDeps): Promise<Json> {
  await deps.turns.next();
  let outcome: DispatchOutcome;
  try {
    outcome = await deps.dispatch({
      method: sub.method,
      url: sub.url,
      headers: sub.headers,
      body: bounded(Buffer.from(sub.body), deps.maxBodyBytes),
      internal: true,
    });
  } catch {
    outcome = { kind: "dropped" };
  }
  if (outcome.kind === "dropped") return { relative_url: "", code: 0, headers: null, body: "" };
  const bytes = replyBytes(outcome.reply);
  const headers: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(bytes.headers)) headers[canonical(name)] = [value];
  return { relative_url: sub.relative_url, code: outcome.reply.status, headers, body: bytes.body.toString("utf8") };
}

export async function handleBatch(ctx: HandlerContext, deps: TrafficDeps, listenPath: string): Promise<Reply> {
  const decoded = decode((await ctx.body()).toString("utf8"), deps.selfUrl(), listenPath, deps.maxDepth);
  if ("reply" in decoded) return decoded.reply;
  const results: Json[] = [];
  if (decoded.sequential) {
    for (const sub of decoded.requests) results.push(await run(sub, deps));
  } else {
    // results in completion order
    const queue = new PQueue({ concurrency: 64 });
    await queue.addAll(
      decoded.requests.map((sub) => async (): Promise<void> => {
        results.push(await run(sub, deps));
      }),
    );
  }
  return { status: 200, body: results };
}
