/** Notification delivery in /metrics (registered on the daemon's registry). */
import { Counter, Gauge } from "prom-client";
import type { Registry } from "prom-client";

export interface NotifyMetrics {
  readonly deliveries: Counter;
  readonly attempts: Counter;
  readonly queueDepth: Gauge;
}

export function notifyMetrics(registry: Registry): NotifyMetrics {
  const registers = [registry];
  return {
    deliveries: new Counter({
      name: "gatesync_notifications_total",
      help: "Notifications by receiver, event and outcome (delivered, failed after every try, dropped from a full queue)",
      labelNames: ["receiver", "event", "outcome"],
      registers,
    }),
    attempts: new Counter({
      name: "gatesync_notification_attempts_total",
      help: "Delivery tries by receiver and answer (2xx, a status code, or error)",
      labelNames: ["receiver", "code"],
      registers,
    }),
    queueDepth: new Gauge({ name: "gatesync_notification_queue_depth", help: "Notifications waiting per receiver", labelNames: ["receiver"], registers }),
  };
}
