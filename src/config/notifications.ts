/**
 * `notifications:` in gatesync.yaml: receivers (a generic JSON webhook signed with HMAC-SHA256, a
 * Slack-compatible incoming webhook, commit status on GitHub or GitLab) and how deliveries are
 * retried. Secrets are named by environment variable, never written in the file.
 */
export const eventNames = ["run-failed", "in-doubt", "commit-refused", "recovered", "leader-changed", "promoted", "frozen"] as const;
export type EventName = (typeof eventNames)[number];

interface ReceiverBase {
  readonly name: string;
  /** The events this receiver is told of (commit-status receivers follow runs instead). */
  readonly events: readonly EventName[];
}

export type ReceiverConfig =
  | (ReceiverBase & { readonly type: "webhook"; readonly url?: string; readonly urlEnv?: string; readonly secretEnv: string })
  | (ReceiverBase & { readonly type: "slack"; readonly urlEnv: string })
  | (ReceiverBase & { readonly type: "github"; readonly apiUrl: string; readonly repository: string; readonly tokenEnv: string; readonly context: string })
  | (ReceiverBase & { readonly type: "gitlab"; readonly apiUrl: string; readonly project: string; readonly tokenEnv: string; readonly context: string });

export interface DeliveryPolicy {
  /** Tries per delivery, the first included. */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** One try's deadline (connect, headers and body). */
  readonly timeoutMs: number;
  /** Deliveries waiting per receiver; beyond it the oldest is dropped (and counted). */
  readonly queueLimit: number;
}

export interface NotificationsConfig {
  /** Base URL the links point at (`…/status`); default: the daemon's own address. */
  readonly statusUrl?: string;
  readonly receivers: readonly ReceiverConfig[];
  readonly delivery: DeliveryPolicy;
}

export const defaultDelivery: DeliveryPolicy = { attempts: 5, baseDelayMs: 1000, maxDelayMs: 60_000, timeoutMs: 10_000, queueLimit: 100 };

type Raw = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function receiver(r: Raw, i: number): ReceiverConfig {
  const name = str(r.name) ?? `${String(r.type)}-${i + 1}`;
  const events = Array.isArray(r.events) ? (r.events as EventName[]) : [...eventNames];
  const base = { name, events };
  switch (r.type) {
    case "webhook":
      return {
        ...base,
        type: "webhook",
        ...(str(r.url) === undefined ? {} : { url: str(r.url)! }),
        ...(str(r.urlEnv) === undefined ? {} : { urlEnv: str(r.urlEnv)! }),
        secretEnv: String(r.secretEnv),
      };
    case "slack":
      return { ...base, type: "slack", urlEnv: String(r.urlEnv) };
    case "github":
      return {
        ...base,
        type: "github",
        apiUrl: str(r.apiUrl) ?? "https://api.github.com",
        repository: String(r.repository),
        tokenEnv: String(r.tokenEnv),
        context: str(r.context) ?? "gatesync",
      };
    default:
      return {
        ...base,
        type: "gitlab",
        apiUrl: str(r.apiUrl) ?? "https://gitlab.com/api/v4",
        project: String(r.project),
        tokenEnv: String(r.tokenEnv),
        context: str(r.context) ?? "gatesync",
      };
  }
}

/** Builds the typed settings from a document that passed the schema. */
export function notificationsFromDocument(raw: unknown): NotificationsConfig | undefined {
  if (raw === undefined || raw === null || typeof raw !== "object") return undefined;
  const n = raw as Raw;
  const d = (n.delivery ?? {}) as Partial<DeliveryPolicy>;
  return {
    ...(str(n.statusUrl) === undefined ? {} : { statusUrl: str(n.statusUrl)!.replace(/\/+$/, "") }),
    receivers: ((n.receivers ?? []) as Raw[]).map(receiver),
    delivery: { ...defaultDelivery, ...d },
  };
}

/** The environment variables the receivers name (registered as credentials: never referenced by resources, always scrubbed). */
export function notificationVariables(n: NotificationsConfig | undefined): Array<{ name: string; setting: string }> {
  return (n?.receivers ?? []).flatMap((r, i) => {
    const at = `notifications.receivers[${i}]`;
    switch (r.type) {
      case "webhook":
        return [{ name: r.secretEnv, setting: `${at}.secretEnv` }, ...(r.urlEnv === undefined ? [] : [{ name: r.urlEnv, setting: `${at}.urlEnv` }])];
      case "slack":
        return [{ name: r.urlEnv, setting: `${at}.urlEnv` }];
      default:
        return [{ name: r.tokenEnv, setting: `${at}.tokenEnv` }];
    }
  });
}
