/** The daemon's notifier, when gatesync.yaml lists receivers; it has its own connection pool. */
import { Agent } from "undici";
import type { Registry } from "prom-client";
import type { GatesyncConfig } from "../config/config.js";
import type { Logger } from "../logger.js";
import { Notifier } from "./notifier.js";

export function createNotifier(
  config: GatesyncConfig,
  deps: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly logger: Logger;
    readonly registry: Registry;
    readonly ownUrl: () => string | undefined;
  },
): Notifier | undefined {
  const n = config.notifications;
  if (n === undefined || n.receivers.length === 0) return undefined;
  // a slow receiver holds at most its own connections, never the management interfaces'
  const dispatcher = new Agent({ connections: 4, keepAliveTimeout: 10_000, connectTimeout: n.delivery.timeoutMs });
  return new Notifier({ config: n, ...deps, dispatcher, onClose: async () => dispatcher.close() });
}
