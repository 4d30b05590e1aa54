/**
 * `GET /state`: the daemon's state as `gatesync state pull` writes it, for merge-request plans
 * (`gatesync plan --state-url`): a CI job plans against the state the daemon applies with,
 * without the daemon's write credentials or a connection to its database. A bearer token of its
 * own (`server.stateTokenEnv`) guards it: the document holds every record and, unless
 * GATESYNC_HASH_KEY holds it, the key of the keyed hashes — as much as read access to the state.
 * Records pass through the redaction layer like every answer; no secret value is in a state.
 */
import type { IncomingMessage } from "node:http";
import type { Reply } from "../../http/http-io.js";
import type { StateBackend } from "../../record/state.js";
import { pulledState } from "../../record/pulled-state.js";
import { safeEqual } from "./webhook.js";

/** The state document, past the state token (the route table checks it first: http/credentials.ts). */
export async function handleStateRead(state: Pick<StateBackend, "read">): Promise<Reply> {
  return { status: 200, body: pulledState(await state.read()), headers: { "cache-control": "no-store" } };
}

/** The answer to a request the state token does not open (404 while the daemon has none), or undefined. */
export function stateTokenRefusal(req: IncomingMessage, token: string | undefined, notServed: string): Reply | undefined {
  if (token === undefined) return { status: 404, body: { error: `${notServed} (server.stateTokenEnv)` } };
  if (!safeEqual(req.headers.authorization ?? "", `Bearer ${token}`))
    return { status: 401, body: { error: "invalid or missing token" }, headers: { "www-authenticate": "Bearer" } };
  return undefined;
}
