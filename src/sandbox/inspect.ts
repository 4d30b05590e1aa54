/** The inspection interface (sandbox only, under /__sandbox/): objects, calls, faults, events, reset. */
import type { Dispatcher } from "undici";
import { isObject, parseJson } from "../http/http-io.js";
import type { Reply } from "../http/http-io.js";
import type { CallLog, CallSummary } from "./call-log.js";
import { deliverEvent } from "./interfaces/events.js";
import type { Delivery } from "./interfaces/events.js";
import { faultProblem } from "./faults.js";
import type { FaultInjector, FaultSettings } from "./faults.js";
import type { Json, SandboxStore } from "./store.js";

export interface SandboxInspector {
  objects(): Json;
  calls(): CallSummary;
  resetCalls(): void;
  faults(): FaultSettings & { injected: FaultInjector["injected"] };
  setFaults(change: Partial<FaultSettings> & { seed?: number }): FaultSettings;
  deliverEvent(event: string, message?: Json): Promise<Delivery[]>;
  /** Back to the fixtures, and an empty call log. */
  reset(): void;
  readonly store: SandboxStore;
}

export function createInspector(store: SandboxStore, log: CallLog, faults: FaultInjector, dispatcher: Dispatcher): SandboxInspector {
  return {
    store,
    objects: () => store.snapshot(),
    calls: () => log.summary(),
    resetCalls: () => log.reset(),
    faults: () => ({ ...faults.current(), injected: { ...faults.injected } }),
    setFaults: (change) => faults.update(change),
    deliverEvent: (event, message = {}) => deliverEvent(store, dispatcher, event, message),
    reset: () => {
      store.reset();
      log.reset();
    },
  };
}

/** One request to the inspection interface; `path` is below /__sandbox. */
export async function handleInspect(method: string, path: string, body: () => Promise<Buffer>, inspector: SandboxInspector, maxDepth: number): Promise<Reply> {
  const json = async (): Promise<Json | undefined> => {
    const parsed = parseJson(await body(), maxDepth);
    return parsed.ok && isObject(parsed.value) ? parsed.value : undefined;
  };
  const key = `${method} ${path}`;
  switch (key) {
    case "GET /health":
      return { status: 200, body: { status: "ok" } };
    case "GET /objects":
      return { status: 200, body: inspector.objects() };
    case "GET /calls":
      return { status: 200, body: inspector.calls() };
    case "DELETE /calls":
      inspector.resetCalls();
      return { status: 204 };
    case "GET /faults":
      return { status: 200, body: inspector.faults() };
    case "PUT /faults": {
      const change = await json();
      const problem = change === undefined ? "body must be a JSON object" : faultProblem(change);
      if (problem !== undefined) return { status: 400, body: { error: problem } };
      return { status: 200, body: inspector.setFaults(change as Partial<FaultSettings>) };
    }
    case "POST /events": {
      const event = await json();
      if (event === undefined || typeof event.event !== "string") return { status: 400, body: { error: 'give {"event": "<type>", "message": {...}}' } };
      const message = isObject(event.message) ? event.message : {};
      return { status: 200, body: { deliveries: await inspector.deliverEvent(event.event, message) } };
    }
    case "POST /reset":
      inspector.reset();
      return { status: 204 };
    default:
      return { status: 404, body: { error: `no inspection route ${key}` } };
  }
}
