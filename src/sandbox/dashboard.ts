/** Dashboard (operation 10: POST {base_url}/api/hooks), with the reference's codes and bodies. */
import type { HandlerContext, Handled, SandboxDeps } from "./context.js";
import { isObject, parseJson } from "../http/http-io.js";
import type { Reply } from "../http/http-io.js";

const answer = (status: number, message: string, ok = false): Reply => ({ status, body: { Status: ok ? "OK" : "Error", Message: message, Meta: null } });
const methods = ["DELETE", "GET", "PUT", "POST", "PATCH"];

export async function handleDashboard(ctx: HandlerContext, deps: SandboxDeps): Promise<Handled> {
  if (ctx.headers.authorization !== `Bearer ${deps.credentials.dashboardToken}`) return { operation: "unknown", reply: answer(401, "Not authorised") };
  if (ctx.path !== "/hooks") return { operation: "unknown", reply: answer(404, "Not found") };
  if (ctx.method !== "POST") return { operation: "createDashboardWebhook", reply: answer(405, "Method not allowed") };
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  if (!parsed.ok || !isObject(parsed.value)) return { operation: "createDashboardWebhook", reply: answer(403, "Request body malformed.") };
  const hook = parsed.value;
  const headerMap = hook.header_map;
  const valid =
    typeof hook.method === "string" &&
    methods.includes(hook.method) &&
    typeof hook.target_path === "string" &&
    hook.target_path !== "" &&
    (hook.name === undefined || typeof hook.name === "string") &&
    (headerMap === undefined || (isObject(headerMap) && Object.values(headerMap).every((v) => typeof v === "string")));
  if (!valid) return { operation: "createDashboardWebhook", reply: answer(400, "Webhook object validation failed.") };
  const name = typeof hook.name === "string" ? hook.name : "";
  if (deps.store.dashboardHooks.some((h) => h.name === name && h.method === hook.method && h.target_path === hook.target_path)) {
    return { operation: "createDashboardWebhook", reply: answer(409, "Webhook already exists") };
  }
  deps.store.dashboardHooks.push({ id: `hook-${deps.store.newId()}`, name, method: hook.method, target_path: hook.target_path, header_map: headerMap ?? {} });
  return { operation: "createDashboardWebhook", reply: answer(200, "Webhook created", true) };
}
