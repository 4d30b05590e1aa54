/** What the server is given (server.ts) and the routes of the table serve (route-table.ts): the daemon's parts and its environments. */
import type { GatesyncConfig } from "../../config/config.js";
import type { Logger } from "../../logger.js";
import type { DaemonMetrics } from "../metrics/metrics.js";
import type { Reconciler } from "../loop/reconciler.js";
import type { TriggerRelay } from "./triggers.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Reply } from "../../http/http-io.js";
import type { StateBackend } from "../../record/state.js";
import type { OwnershipAnswer } from "./ownership-endpoint.js";
import type { PromoteRoute } from "./promote-endpoint.js";
import type { FreezeRoute } from "./freeze-endpoint.js";
import type { Hold } from "../hold/hold.js";
import type { StatusPage } from "../ui/status-page.js";
import type { EnvironmentSync, ReadSlots, TriggerContext } from "./triggers.js";
import type { Credentials } from "./credentials.js";

/** What the server reads of the reconcile loop (with environments: of all of them). */
export type ServedReconciler = Pick<Reconciler, "trigger" | "isStopping" | "synced"> & Partial<Pick<Reconciler, "validationOverdue">>;

/**
 * What the server is started with: the daemon's own parts (its loops for the triggers and the
 * probes, its metrics, the tokens) and its environments — one shape whether a config names
 * several or none (the implicit one, served at the root as well).
 */
export interface DaemonServerOptions {
  /** `host:port`; port 0 picks a free one. */
  readonly listen: string;
  readonly reconciler: ServedReconciler;
  readonly metrics: DaemonMetrics;
  readonly logger: Logger;
  readonly webhookSecret?: string;
  readonly syncToken?: string;
  /** The variables gatesync.yaml names for them (`server.webhookSecretEnv`, `server.syncTokenEnv`): said in a 404 while unset. */
  readonly variables?: TriggerContext["variables"];
  /** Asked of the status page and /status when set (Bearer, or Basic with it as password). */
  readonly pagesToken?: string;
  /** How long a client has to take its whole answer (the live stream excepted). */
  readonly answerDeadlineMs?: number;
  /** `/readyz`'s role: `leader`, `standby`, `single` or `fleet`. */
  readonly role?: () => string;
  /** The operator's config in force: `GET /config` answers what of it a merge-request plan needs. */
  readonly operatorConfig?: () => GatesyncConfig;
  /** Each environment's hold now (hold.ts): `GET /config` says it, for a merge-request plan. */
  readonly holdOf?: (name: string) => Promise<Hold | undefined>;
  readonly maxBodyBytes?: number;
  /** Bearer token of `GET /state` (merge-request plans); absent: not served. */
  readonly stateToken?: string;
  /** With replicas: triggers a standby receives go to the leader. */
  readonly relay?: TriggerRelay;
  /** The environments and what their routes serve (http/route-table.ts). */
  readonly environments: ServedEnvironments;
}

/** One environment as its routes serve it (below `/environments/NAME/`; the implicit one at the root too). */
export interface ServedEnvironment {
  readonly name: string;
  /** Its status page; absent: its page paths answer 404. */
  readonly page: StatusPage | undefined;
  readonly state: Pick<StateBackend, "read">;
  /** Its `/ownership`: the registry's rows of its targets (ownership-endpoint.ts). */
  readonly ownership: () => Promise<OwnershipAnswer>;
  /** Its `/status`. */
  status(): Promise<Record<string, unknown>>;
}

export interface ServedEnvironments {
  /** The one environment of a config without `environments:`: its root paths are aliases of `/environments/default/…`. */
  readonly implicit: boolean;
  readonly list: readonly ServedEnvironment[];
  /** `/status` of them all: a row of named environments only (the implicit environment's `/status` is its own). */
  readonly statusOfAll: () => Promise<Record<string, unknown>>;
  /** What `POST /environments/NAME/sync` runs. */
  readonly sync?: EnvironmentSync;
  /** `POST /environments/NAME/promote`. */
  readonly promote?: PromoteRoute;
  /** `POST /environments/NAME/freeze` and `/unfreeze`: the promotion token's (freeze-endpoint.ts). */
  readonly freeze?: FreezeRoute;
}

/** Everything a route's handler reads. */
export interface Served {
  readonly opts: DaemonServerOptions;
  readonly environments: ServedEnvironments;
  readonly triggers: TriggerContext;
  readonly slots: ReadSlots;
  readonly credentials: Credentials;
}

/** A request to one route: its path's parameters as sent (still percent-encoded), and what it serves. */
export interface RouteRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly params: Readonly<Record<string, string>>;
  /** The path the route matched, as sent (an alias: the `/environments/default/…` it stands for). */
  readonly path: string;
  /** The request's query (`?status=failed`), or "". */
  readonly search: string;
  readonly served: Served;
}

/** A reply to write, or "answered" when the handler wrote it (a page, the live stream). */
export type Answer = Reply | "answered";
