/**
 * The daemon's notifier: turns runs and leadership changes into deliveries to every receiver
 * that wants them. Every method returns at once; delivery happens behind (see delivery.ts).
 */
import { randomUUID } from "node:crypto";
import type { Dispatcher } from "undici";
import type { Registry } from "prom-client";
import type { RunReport } from "../run/run-report.js";
import { ConfigError, ErrorCode } from "../errors.js";
import type { Logger } from "../logger.js";
import type { NotificationsConfig, ReceiverConfig } from "../config/notifications.js";
import { ReceiverQueue } from "./delivery.js";
import type { CommitStatus, NotificationEvent } from "./events.js";
import { eventsOfRun, finalStatus } from "./events.js";
import { notifyMetrics } from "./metrics.js";
import type { RequestContext } from "./requests.js";
import { eventRequest, statusRequest } from "./requests.js";

export interface NotifierOptions {
  readonly config: NotificationsConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly dispatcher: Dispatcher;
  /** The daemon's own base URL, known once its server listens. */
  readonly ownUrl: () => string | undefined;
  readonly random?: () => number;
  /** Called once the receivers are closed (the dispatcher's owner closes it). */
  readonly onClose?: () => Promise<void>;
}

interface Receiver {
  readonly config: ReceiverConfig;
  readonly queue: ReceiverQueue;
  readonly secrets: Pick<RequestContext, "url" | "secret" | "token">;
}

function readSecrets(r: ReceiverConfig, env: Readonly<Record<string, string | undefined>>): Receiver["secrets"] {
  const need = (name: string, setting: string): string => {
    const value = env[name];
    if (value === undefined || value === "")
      throw new ConfigError(ErrorCode.CONFIG_INVALID, `notification receiver ${r.name}: ${name} is not set`, {
        hint: `set the variable ${setting} names, or remove the receiver`,
      });
    return value;
  };
  switch (r.type) {
    case "webhook":
      return { secret: need(r.secretEnv, "secretEnv"), ...(r.urlEnv === undefined ? {} : { url: need(r.urlEnv, "urlEnv") }) };
    case "slack":
      return { url: need(r.urlEnv, "urlEnv") };
    default:
      return { token: need(r.tokenEnv, "tokenEnv") };
  }
}

export class Notifier {
  private readonly receivers: Receiver[];
  private lastFailure: string | undefined;
  /** The commit a `pending` status was posted for, in the run in progress. */
  private pendingCommit: string | undefined;

  /** Reads every receiver's secrets now: a missing one is a CONFIG_INVALID error at start, not a silent gap later. */
  constructor(private readonly opts: NotifierOptions) {
    const metrics = notifyMetrics(opts.registry);
    const log = opts.logger.child({ component: "notify" });
    this.receivers = opts.config.receivers.map((config) => ({
      config,
      secrets: readSecrets(config, opts.env),
      queue: new ReceiverQueue(config.name, opts.config.delivery, {
        dispatcher: opts.dispatcher,
        metrics,
        logger: log,
        ...(opts.random === undefined ? {} : { random: opts.random }),
      }),
    }));
  }

  private statusUrl(): string {
    return `${this.opts.config.statusUrl ?? this.opts.ownUrl() ?? ""}/status`;
  }

  private context(r: Receiver): RequestContext {
    return { deliveryId: randomUUID(), statusUrl: this.statusUrl(), ...r.secrets };
  }

  private notify(event: NotificationEvent): void {
    for (const r of this.receivers) {
      const c = r.config;
      if ((c.type === "webhook" || c.type === "slack") && c.events.includes(event.event)) {
        const ctx = this.context(r);
        r.queue.enqueue({ event: event.event, build: () => eventRequest(c, event, ctx) });
      }
    }
  }

  private postStatus(status: CommitStatus): void {
    for (const r of this.receivers) {
      const c = r.config;
      if (c.type === "github" || c.type === "gitlab") {
        const ctx = this.context(r);
        r.queue.enqueue({ event: `commit-status:${status.state}`, build: () => statusRequest(c, status, ctx) });
      }
    }
  }

  /** A run begins work on a commit: `pending` on it. */
  runStarted(commit: string | undefined): void {
    this.pendingCommit = commit;
    if (commit !== undefined) this.postStatus({ commit, state: "pending", description: "gatesync is applying this commit" });
  }

  /** A run finished: its events, and the commit's final status if it was marked pending. */
  runFinished(report: RunReport): void {
    const { events, failure } = eventsOfRun(report, this.lastFailure);
    this.lastFailure = failure;
    for (const e of events) this.notify(e);
    const status = finalStatus(report);
    if (status !== undefined && status.commit === this.pendingCommit) this.postStatus(status);
    this.pendingCommit = undefined;
  }

  /** A revision was promoted to this environment (or it was rolled back): daemon/promotion.ts. */
  promoted(event: { readonly revision: string; readonly summary: string }): void {
    this.notify({ event: "promoted", at: new Date().toISOString(), revision: event.revision, commit: event.revision, summary: event.summary });
  }

  /** The environment was frozen or unfrozen (daemon/freeze-endpoint.ts): "production frozen until 18:00 UTC: incident 4521". */
  held(event: { readonly summary: string }): void {
    this.notify({ event: "frozen", at: new Date().toISOString(), summary: event.summary });
  }

  leaderChanged(leader: boolean): void {
    this.notify({
      event: "leader-changed",
      at: new Date().toISOString(),
      leader,
      summary: leader ? "this gatesync replica became the leader: it applies from now on" : "this gatesync replica lost the leadership: it stopped applying",
    });
  }

  /** Waits up to `graceMs` for deliveries in progress, then drops the rest. */
  async close(graceMs = 2000): Promise<void> {
    // eslint-disable-next-line no-restricted-syntax -- one promise per configured receiver, each already bounded by graceMs
    await Promise.all(this.receivers.map(async (r) => r.queue.close(graceMs)));
    await this.opts.onClose?.();
  }
}
