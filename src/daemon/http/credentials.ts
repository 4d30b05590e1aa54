/**
 * The credentials the daemon's routes take, one per purpose, and the check each route's row
 * names (route-table.ts): the dispatcher checks it before the route reads anything. A route
 * accepts exactly its own credential: the pages' token opens the pages and nothing else, the
 * promotion token promotes and reads nothing.
 */
import type { IncomingMessage } from "node:http";
import type { Reply } from "../../http/http-io.js";
import type { PromoteRoute } from "./promote-endpoint.js";
import { stateTokenRefusal } from "./state-endpoint.js";
import { syncRefusal } from "./triggers.js";
import type { TriggerContext } from "./triggers.js";
import { safeEqual } from "./webhook.js";

/**
 * What a route takes: nothing (probes, metrics), the pages' token (`server.pagesTokenEnv`), the
 * state token (`server.stateTokenEnv`: the state and the operator's settings), the sync token,
 * the push webhook's signature (`server.webhookSecretEnv`: it covers the body, so its route
 * checks it as it reads), or the promotion token.
 */
export type Credential = "none" | "pages" | "state" | "sync" | "webhook" | "promote";

/** The values the credentials are checked against (unset: the route is open, for the pages, or answers 404). */
export interface Credentials {
  readonly pagesToken?: string | undefined;
  readonly stateToken?: string | undefined;
  readonly promote?: PromoteRoute | undefined;
  readonly triggers: TriggerContext;
}

/** Whether the request carries the pages' token: `Bearer TOKEN`, or Basic with any user and TOKEN as password. */
function carriesPagesToken(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? "";
  const bearer = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  if (bearer !== undefined) return safeEqual(bearer, token);
  const basic = /^Basic\s+(\S+)$/i.exec(header)?.[1];
  if (basic === undefined) return false;
  const decoded = Buffer.from(basic, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 && safeEqual(decoded.slice(colon + 1), token);
}

/** 401 for a page without the pages' token: the browser asks for it (Basic), a script sends it as a bearer token. */
const askForPagesToken: Reply = {
  status: 401,
  headers: { "www-authenticate": 'Basic realm="gatesync", charset="UTF-8"', "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  raw: Buffer.from("authentication required: the token server.pagesTokenEnv names, as a bearer token or as the password\n"),
};

/** The answer to a promotion request without the promotion token (404 while the daemon has none), or undefined. */
export function promoteRefusal(req: IncomingMessage, route: PromoteRoute | undefined): Reply | undefined {
  if (route?.token === undefined) return { status: 404, body: { error: "promotion is not configured: set server.promoteTokenEnv and its variable" } };
  if (!safeEqual(req.headers.authorization ?? "", `Bearer ${route.token}`)) return { status: 401, body: { error: "invalid or missing promotion token" } };
  return undefined;
}

/**
 * Why `req` does not hold the credential a route takes, as the answer; undefined when it does.
 * `notServed` says what a route of the state token serves, for its 404 while there is none.
 */
export function credentialRefusal(credential: Credential, req: IncomingMessage, held: Credentials, notServed = "the state is not served"): Reply | undefined {
  switch (credential) {
    case "none":
      return undefined;
    case "pages":
      return held.pagesToken === undefined || carriesPagesToken(req, held.pagesToken) ? undefined : askForPagesToken;
    case "state":
      return stateTokenRefusal(req, held.stateToken, notServed);
    case "sync":
      return syncRefusal(req, held.triggers);
    case "promote":
      return promoteRefusal(req, held.promote);
    case "webhook":
      // the signature covers the body: the route checks it as it reads (triggers.ts), before anything else
      return undefined;
  }
}
