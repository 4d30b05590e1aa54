/** LLM settings (operation 6: POST {llm_api_url}/llm-settings); attributes are not validated. */
import { randomUUID } from "node:crypto";
import type { HandlerContext, Handled, SandboxDeps } from "./context.js";
import { isObject, parseJson } from "../http/http-io.js";
import type { Reply } from "../http/http-io.js";

const badRequest = (detail: string): Reply => ({ status: 400, body: { errors: [{ title: "Bad Request", detail }] } });

export async function handleLlm(ctx: HandlerContext, deps: SandboxDeps): Promise<Handled> {
  if (ctx.headers.authorization !== deps.credentials.llmKey) return { operation: "unknown", reply: { status: 401, body: { error: "Unauthorized" } } };
  if (ctx.path !== "/llm-settings") return { operation: "unknown", reply: { status: 404, body: { errors: [{ title: "Not Found", detail: `no route ${ctx.path}` }] } } };
  if (ctx.method !== "POST") return { operation: "createLlmSettings", reply: { status: 405, body: { errors: [{ title: "Method Not Allowed", detail: ctx.method }] } } };
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  if (!parsed.ok) return { operation: "createLlmSettings", reply: badRequest("request body is not valid JSON") };
  const data = isObject(parsed.value) ? parsed.value.data : undefined;
  if (!isObject(data) || !isObject(data.attributes)) return { operation: "createLlmSettings", reply: badRequest("data.attributes must be an object") };
  const settings = { type: typeof data.type === "string" ? data.type : "llm-settings", id: randomUUID(), attributes: data.attributes };
  deps.store.llmSettings.set(settings.id, settings);
  return { operation: "createLlmSettings", reply: { status: 201, body: { data: settings } } };
}
