/**
 * The ten operations of the management-interfaces contract (part 4), as data: used by the
 * sandbox (routing names, call counts) and by plan and apply (what each change will call).
 */
import type { InterfaceName } from "./interfaces.js";

export type { InterfaceName };

export interface OperationSpec {
  /** Number in the contract. */
  readonly number: number;
  readonly interface: InterfaceName;
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path template below the interface's base address. */
  readonly path: string;
  /** Sending it twice has the effect of sending it once. */
  readonly idempotent: boolean;
  /** A gateway operation that can travel inside a batch call (operation 4) through a loopback API. */
  readonly batchable: boolean;
}

export const operations = {
  patchApi: { number: 1, interface: "gateway", method: "PATCH", path: "/gw/apis/oas/{apiID}", idempotent: true, batchable: true },
  updateOAuthClient: { number: 2, interface: "gateway", method: "PUT", path: "/gw/oauth/clients/{apiID}/{keyName}", idempotent: true, batchable: true },
  updateClientType: {
    number: 3,
    interface: "portal",
    method: "PUT",
    path: "/oauth-providers/{provider_id}/client-types/{client_type_id}",
    idempotent: true,
    batchable: false,
  },
  batch: { number: 4, interface: "gateway", method: "POST", path: "/{listen_path}/gw/batch/", idempotent: false, batchable: false },
  createProduct: { number: 5, interface: "portal", method: "POST", path: "/products", idempotent: false, batchable: false },
  createLlmSettings: { number: 6, interface: "llm", method: "POST", path: "/llm-settings", idempotent: false, batchable: false },
  upsertOrgKey: { number: 7, interface: "gateway", method: "POST", path: "/gw/org/keys/{keyID}", idempotent: true, batchable: true },
  updatePortalWebhook: { number: 8, interface: "portal", method: "PUT", path: "/webhooks/{webhook_id}", idempotent: true, batchable: false },
  createPortalWebhook: { number: 9, interface: "portal", method: "POST", path: "/webhooks", idempotent: false, batchable: false },
  createDashboardWebhook: { number: 10, interface: "dashboard", method: "POST", path: "/api/hooks", idempotent: false, batchable: false },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof operations;

/**
 * The query string of an operation call: keys sorted, then `reset_quota=1` when the call resets
 * a quota. `show` renders a value; the plan passes one that prints redacted values as
 * "(sensitive)", so the path it shows is the path apply sends, secrets aside.
 */
export function queryString<V>(query: Readonly<Record<string, V>>, reset: boolean, show: (value: V) => string): string {
  const entries = Object.entries(query)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${encodeURIComponent(k)}=${show(v)}`);
  if (reset) entries.push("reset_quota=1");
  return entries.length === 0 ? "" : `?${entries.join("&")}`;
}

/** The portal's event types (reference: "Event types the portal emits"). */
export const portalEventTypes = [
  "AccessRequestApproved",
  "AccessRequestRejected",
  "AccessRequestCreated",
  "OrganisationRequestCreated",
  "OrganisationRequestApproved",
  "OrganisationRequestRejected",
  "OrganisationRegistered",
  "UserRegistered",
  "UserAccountActivated",
  "UserAccountDeactivated",
  "PasswordReset",
  "RegisterInvite",
  "ApplicationRegistered",
  "CredentialRegistered",
] as const;
