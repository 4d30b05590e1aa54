/** What the routes of the table serve (route-table.ts): the daemon's parts and its environments. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Reply } from "../../http/http-io.js";
import type { StateBackend } from "../../record/state.js";
import type { PromoteRoute } from "../promote-endpoint.js";
import type { DaemonServerOptions } from "../server.js";
import type { StatusPage } from "../ui/status-page.js";
import type { EnvironmentSync, ReadSlots, TriggerContext } from "../triggers.js";
import type { Credentials } from "./credentials.js";

/** One environment as its routes serve it (below `/environments/NAME/`; the implicit one at the root too). */
export interface ServedEnvironment {
  readonly name: string;
  /** Its status page; absent: its page paths answer 404. */
  readonly page: StatusPage | undefined;
  readonly state: Pick<StateBackend, "read">;
  /** Its `/status`. */
  status(): Promise<Record<string, unknown>>;
}

export interface ServedEnvironments {
  /** The one environment of a config without `environments:`: its root paths are aliases of `/environments/default/…`. */
  readonly implicit: boolean;
  readonly list: readonly ServedEnvironment[];
  /** `/status` of them all (named environments). */
  readonly statusOfAll: () => Promise<Record<string, unknown>>;
  /** What `POST /environments/NAME/sync` runs. */
  readonly sync?: EnvironmentSync;
  /** `POST /environments/NAME/promote`. */
  readonly promote?: PromoteRoute;
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
  readonly served: Served;
}

/** A reply to write, or "answered" when the handler wrote it (a page, the live stream). */
export type Answer = Reply | "answered";
