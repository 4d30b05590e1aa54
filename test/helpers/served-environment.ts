/** The implicit environment as a server started in a test serves it: its state, runs and `/status`, no page. */
import type { ServedEnvironments } from "../../src/daemon/http/served.js";
import { buildStatus } from "../../src/daemon/http/status-body.js";
import type { StatusParts } from "../../src/daemon/http/status-body.js";
import type { StateSnapshot } from "../../src/record/state.js";

export function implicitEnvironment(parts: StatusParts & { readonly state: { read(): Promise<StateSnapshot> } }): ServedEnvironments {
  const status = (): Promise<Record<string, unknown>> => buildStatus(parts);
  return { implicit: true, list: [{ name: "default", page: undefined, state: parts.state, status }], statusOfAll: status };
}
