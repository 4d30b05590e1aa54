/**
 * `POST /environments/NAME/promote` (docs/user/promotion.md): a promotion or rollback, guarded by
 * a token of its own (`server.promoteTokenEnv`) — the sync, state and pages tokens cannot promote;
 * unset, the route answers 404. The body is small JSON: `revision` (a commit id or prefix),
 * `dryRun`, `rollback` with `steps` and `forward`. A refused promotion answers 409 with the gate it did not pass.
 */
import type { IncomingMessage } from "node:http";
import { GatesyncError, PromotionError } from "../../errors.js";
import { BodyTooLarge, isObject, parseJson, readBody } from "../../http/http-io.js";
import type { Reply } from "../../http/http-io.js";
import type { PromotionActor } from "../../record/history/promotion-history.js";
import type { PromotionAnswer, PromotionAsk } from "../../promotion/promotion.js";

export interface PromoteRoute {
  /** The token's value; absent: not served. */
  readonly token: string | undefined;
  /** The variable that holds it (recorded as who promoted, never its value). */
  readonly variable: string | undefined;
  readonly names: readonly string[];
  readonly promote: (environment: string, ask: PromotionAsk) => Promise<PromotionAnswer>;
}

/** What the body asks, or why it cannot be read. */
function askOf(value: unknown, actor: (rollback: boolean) => PromotionActor): PromotionAsk | string {
  if (!isObject(value)) return "the body is a JSON object: { revision?, dryRun?, rollback?: { steps?, forward? }, overrideFreeze? }";
  const { revision, dryRun, rollback, overrideFreeze } = value;
  if (overrideFreeze !== undefined && typeof overrideFreeze !== "boolean") return "overrideFreeze is true or false";
  if (revision !== undefined && typeof revision !== "string") return "revision is a commit id";
  if (dryRun !== undefined && typeof dryRun !== "boolean") return "dryRun is true or false";
  if (rollback !== undefined && !isObject(rollback)) return "rollback is an object: { steps?, forward? }";
  const steps = rollback?.steps;
  if (steps !== undefined && (typeof steps !== "number" || !Number.isInteger(steps) || steps < 1 || steps > 1000))
    return "rollback.steps is a whole number from 1";
  const forward = rollback?.forward;
  if (forward !== undefined && typeof forward !== "boolean") return "rollback.forward is true or false";
  if (forward === true && revision === undefined) return "rollback.forward goes to a revision: give revision";
  return {
    ...(revision === undefined ? {} : { revision }),
    dryRun: dryRun === true,
    actor: actor(rollback !== undefined),
    ...(rollback === undefined ? {} : { rollback: { ...(steps === undefined ? {} : { steps }), ...(forward === true ? { forward } : {}) } }),
    ...(overrideFreeze === true ? { overrideFreeze: true } : {}),
  };
}

/**
 * The environment an operator's route names (promote, freeze) and its small JSON body (`{}` when
 * empty), or the answer refusing them: a name that does not decode or is no environment, a body
 * past `bytes`.
 */
export async function environmentRequest(
  req: IncomingMessage,
  encoded: string,
  names: readonly string[],
  limits: { readonly bytes: number; readonly depth: number },
): Promise<{ reply: Reply } | { name: string; parsed: ReturnType<typeof parseJson> }> {
  let name: string;
  try {
    name = decodeURIComponent(encoded);
  } catch {
    return { reply: { status: 400, body: { error: "bad environment name" } } };
  }
  if (!names.includes(name)) return { reply: { status: 404, body: { error: "no such environment", environments: names } } };
  try {
    const body = await readBody(req, limits.bytes);
    return { name, parsed: body.length === 0 ? { ok: true as const, value: {} } : parseJson(body, limits.depth) };
  } catch (err) {
    if (err instanceof BodyTooLarge) return { reply: { status: 413, body: { error: "body too large" } } };
    throw err;
  }
}

/** A promotion, past the promotion token (the route table checks it first: http/credentials.ts). */
export async function handlePromote(req: IncomingMessage, encoded: string, route: PromoteRoute | undefined): Promise<Reply> {
  if (route === undefined) return { status: 404, body: { error: "promotion is not configured: set server.promoteTokenEnv and its variable" } };
  const asked = await environmentRequest(req, encoded, route.names, { bytes: 64 * 1024, depth: 8 });
  if ("reply" in asked) return asked.reply;
  const { name, parsed } = asked;
  const token = route.variable ?? "promotion token";
  const ask = parsed.ok ? askOf(parsed.value, (rollback) => (rollback ? { by: "rollback", token } : { by: "token", token })) : "the body is not JSON";
  if (typeof ask === "string") return { status: 400, body: { error: ask } };
  try {
    const answer = await route.promote(name, ask);
    // nothing was recorded for a revision in force: nothing accepted to do
    return { status: ask.dryRun || answer.alreadyInForce === true ? 200 : 202, body: answer };
  } catch (err) {
    if (err instanceof PromotionError)
      return { status: 409, body: { error: err.message, code: err.code, ...(err.hint === undefined ? {} : { hint: err.hint }) } };
    if (err instanceof GatesyncError) return { status: 422, body: { error: err.message, code: err.code } };
    throw err;
  }
}
