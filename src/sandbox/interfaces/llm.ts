/**
 * LLM settings (operation 6: POST {llm_api_url}/llm-settings): attribute types checked (the
 * integer ones refuse 0.5), ranges not; `type` always `llm-settings`, `id` a decimal number
 * written as a string, every attribute in the answer with its zero value filled in.
 */
import { parseJson } from "../../http/http-io.js";
import type { Reply } from "../../http/http-io.js";
import type { HandlerContext, Handled, SandboxDeps } from "../context.js";
import { llmAttributes, llmSettingsBody } from "../interface-description.js";
import type { Json } from "../store.js";
import { decodeWire, zeroOf } from "../wire.js";

const badRequest = (detail: string): Reply => ({ status: 400, body: { errors: [{ title: "Bad Request", detail }] } });

/**
 * Production splits the header on a space and takes the key from the second of exactly two
 * parts (`Bearer <key>`): a bare key, three parts or another key are all 401.
 */
function authorised(header: string | undefined, key: string): boolean {
  const parts = (header ?? "").split(" ");
  return parts.length === 2 && parts[1] === key;
}

export async function handleLlm(ctx: HandlerContext, deps: SandboxDeps): Promise<Handled> {
  if (!authorised(ctx.headers.authorization, deps.credentials.llmKey)) return { operation: "unknown", reply: { status: 401, body: { error: "Unauthorized" } } };
  if (ctx.path !== "/llm-settings")
    return { operation: "unknown", reply: { status: 404, body: { errors: [{ title: "Not Found", detail: `no route ${ctx.path}` }] } } };
  if (ctx.method !== "POST")
    return { operation: "createLlmSettings", reply: { status: 405, body: { errors: [{ title: "Method Not Allowed", detail: ctx.method }] } } };
  return { operation: "createLlmSettings", reply: await createSettings(ctx, deps) };
}

async function createSettings(ctx: HandlerContext, deps: SandboxDeps): Promise<Reply> {
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  if (!parsed.ok) return badRequest("request body is not valid JSON");
  const decoded = decodeWire(parsed.value, llmSettingsBody);
  if (!decoded.ok) return badRequest(decoded.problem);
  const data = ((decoded.value as Json | null)?.data ?? {}) as Json;
  const given = (data.attributes ?? {}) as Json;
  const attributes: Json = Object.fromEntries(Object.entries(llmAttributes).map(([name, type]) => [name, given[name] ?? zeroOf(type)]));
  const settings = { type: "llm-settings", id: String(deps.store.newId()), attributes };
  deps.store.llmSettings.set(settings.id, settings);
  return { status: 201, body: { data: settings } };
}
