/** Dashboard (operation 10: POST {base_url}/api/hooks), with the reference's codes and bodies. */
import { parseJson } from "../../http/http-io.js";
import type { Reply } from "../../http/http-io.js";
import type { HandlerContext, Handled, SandboxDeps } from "../context.js";
import { dashboardHookBody } from "../interface-description.js";
import type { Json } from "../store.js";
import { decodeWire } from "../wire.js";

const answer = (status: number, message: string, ok = false): Reply => ({ status, body: { Status: ok ? "OK" : "Error", Message: message, Meta: null } });
const methods = ["DELETE", "GET", "PUT", "POST", "PATCH"];

export async function handleDashboard(ctx: HandlerContext, deps: SandboxDeps): Promise<Handled> {
  if (ctx.headers.authorization !== `Bearer ${deps.credentials.dashboardToken}`) return { operation: "unknown", reply: answer(401, "Not authorised") };
  if (ctx.path !== "/hooks") return { operation: "unknown", reply: answer(404, "Not found") };
  if (ctx.method !== "POST") return { operation: "createDashboardWebhook", reply: answer(405, "Method not allowed") };
  return { operation: "createDashboardWebhook", reply: await createHook(ctx, deps) };
}

async function createHook(ctx: HandlerContext, deps: SandboxDeps): Promise<Reply> {
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  // not JSON, or JSON that does not decode into a hook (a wrong type): the decoder's error
  const decoded = parsed.ok ? decodeWire(parsed.value, dashboardHookBody) : undefined;
  if (decoded?.ok !== true) return answer(403, "Request body malformed.");
  // null decodes into an empty hook
  const hook = (decoded.value ?? {}) as Json;
  const method = typeof hook.method === "string" ? hook.method : "";
  const target = typeof hook.target_path === "string" ? hook.target_path : "";
  if (!methods.includes(method) || target === "") return answer(400, "Webhook object validation failed.");
  const name = typeof hook.name === "string" ? hook.name : "";
  if (deps.store.dashboardHooks.some((h) => h.name === name && h.method === method && h.target_path === target)) return answer(409, "Webhook already exists");
  deps.store.dashboardHooks.push({ id: `hook-${deps.store.newId()}`, name, method, target_path: target, header_map: hook.header_map ?? {} });
  return answer(200, "Webhook created", true);
}
