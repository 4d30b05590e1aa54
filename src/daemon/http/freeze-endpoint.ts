/**
 * `POST /environments/NAME/freeze` and `POST /environments/NAME/unfreeze`
 * (docs/user/promotion.md#freezes-and-windows): the operator's, guarded by the promotion token
 * (`server.promoteTokenEnv`) as `promote` is — unset, 404. A freeze is a row of the environment's
 * history (record/freeze-history.ts), audited with the token's variable; the body is small JSON:
 * `{ reason, until? }` (an ISO time in the future) to freeze, `{ reason? }` to unfreeze.
 */
import type { IncomingMessage } from "node:http";
import { boundText } from "../../text/bounded-text.js";
import { isObject } from "../../http/http-io.js";
import { environmentRequest } from "./promote-endpoint.js";
import type { Reply } from "../../http/http-io.js";
import type { FreezeRecord } from "../../record/history/freeze-history.js";
import type { Hold } from "../hold/hold.js";

export interface FreezeRoute {
  /** The promotion token's variable (the route table checks its value: http/credentials.ts), recorded as who froze. */
  readonly variable: string | undefined;
  readonly names: readonly string[];
  /** Writes the row (in the environment's state), then has the environment run where it is led; answers the hold now in force. */
  readonly write: (environment: string, row: FreezeRecord) => Promise<Hold | undefined>;
}

/** The row the body asks for, or why it cannot be taken. */
export function freezeRowOf(value: unknown, frozen: boolean, by: string, now: number): FreezeRecord | string {
  if (!isObject(value)) return "the body is a JSON object: { reason, until? }";
  const { reason, until } = value;
  if (reason !== undefined && typeof reason !== "string") return "reason is a text";
  const said = boundText(typeof reason === "string" ? reason : "", 200).trim();
  if (frozen && said === "") return "a freeze needs a reason (it is what every page, notification and refusal says)";
  if (until !== undefined && (!frozen || typeof until !== "string")) return frozen ? "until is an ISO time (2026-12-02T18:00:00Z)" : "an unfreeze has no until";
  const untilAt = typeof until === "string" ? Date.parse(until) : undefined;
  if (untilAt !== undefined && (Number.isNaN(untilAt) || !/^\d{4}-\d\d-\d\dT/.test(until as string))) return "until is an ISO time (2026-12-02T18:00:00Z)";
  if (untilAt !== undefined && untilAt <= now) return `until ${new Date(untilAt).toISOString()} is not in the future`;
  const at = new Date(now).toISOString();
  return {
    kind: "freeze",
    frozen,
    reason: said === "" ? "unfrozen" : said,
    ...(untilAt === undefined ? {} : { until: new Date(untilAt).toISOString() }),
    by,
    startedAt: at,
    finishedAt: at,
  };
}

export async function handleFreeze(req: IncomingMessage, encoded: string, action: string, route: FreezeRoute | undefined): Promise<Reply> {
  // the method and the promotion token are the route table's (http/route-table.ts): checked before this reads anything
  if (route === undefined) return { status: 404, body: { error: "freezes are not configured: set server.promoteTokenEnv and its variable" } };
  const asked = await environmentRequest(req, encoded, route.names, { bytes: 16 * 1024, depth: 4 });
  if ("reply" in asked) return asked.reply;
  const { name, parsed } = asked;
  const row = parsed.ok ? freezeRowOf(parsed.value, action === "freeze", route.variable ?? "promotion token", Date.now()) : "the body is not JSON";
  if (typeof row === "string") return { status: 400, body: { error: row } };
  const hold = await route.write(name, row);
  return {
    status: 200,
    body: { environment: name, frozen: row.frozen, reason: row.reason, ...(row.until === undefined ? {} : { until: row.until }), hold: hold ?? null },
  };
}
