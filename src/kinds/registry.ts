import { apiDefinitionKind } from "./api-definition.js";
import { apiProductKind } from "./api-product.js";
import { clientTypeKind } from "./client-type.js";
import { dashboardWebhookKind } from "./dashboard-webhook.js";
import type { Deferred } from "../deferred.js";
import type { KindModule, KindName, Spec } from "./kind.js";
import { llmSettingsKind } from "./llm-settings.js";
import { oauthClientKind } from "./oauth-client.js";
import { orgKeyKind } from "./org-key.js";
import { portalWebhookKind } from "./portal-webhook.js";

/**
 * Every kind gatesync knows, in the order plans and listings show them. A new kind is its module
 * listed here (its name comes from the module), its schema and its operations.
 */
export const kindModules = [
  apiDefinitionKind,
  oauthClientKind,
  orgKeyKind,
  clientTypeKind,
  apiProductKind,
  portalWebhookKind,
  dashboardWebhookKind,
  llmSettingsKind,
] as const;

export const kindNames: readonly KindName[] = kindModules.map((m) => m.kind);

const modules = Object.fromEntries(kindModules.map((m) => [m.kind, m])) as Record<KindName, KindModule>;

export function isKindName(value: unknown): value is KindName {
  return typeof value === "string" && (kindNames as readonly string[]).includes(value);
}

export function kindModule(kind: KindName): KindModule {
  return modules[kind];
}

/** The module of a kind named in data (state, plans); undefined for a name this version does not know. */
export function knownKind(name: string): KindModule | undefined {
  return isKindName(name) ? modules[name] : undefined;
}

/** The path parameters a server-assigned id fills in later calls on its object. */
export function serverIdAddress(kind: string, serverId: string): Record<string, string> {
  const param = knownKind(kind)?.serverId?.param;
  return param === undefined ? {} : { [param]: serverId };
}

/**
 * The gateway API ids the given resources provide, by resource name (kinds with a
 * `providedApiId` hook): how an `apiRef` becomes the id a request carries, and what identities
 * are built from. A resource whose spec gives no id (an invalid one) provides none.
 */
export function providedApiIds(resources: Iterable<{ readonly kind: string; readonly name: string; readonly spec: Deferred<Spec> }>): Map<string, string> {
  const ids = new Map<string, string>();
  for (const r of resources) {
    // only a kind that provides an API id has its spec read
    const kind = knownKind(r.kind);
    const id = kind?.providedApiId === undefined ? undefined : kind.providedApiId(r.spec.read());
    if (id !== undefined) ids.set(r.name, id);
  }
  return ids;
}

/**
 * Whether an object of this kind made by hand can be adopted (recorded under its id instead of
 * created again): the server creates and names its objects (the kind's `serverId`). The others
 * are addressed by an id their spec gives, so there is nothing to adopt.
 */
export function isAdoptable(kind: KindName): boolean {
  return modules[kind].serverId !== undefined;
}

/** The kinds `isAdoptable` accepts, in registry order. */
export function adoptableKinds(): KindName[] {
  return kindNames.filter(isAdoptable);
}

export function allKinds(): readonly KindModule[] {
  return kindModules;
}

/**
 * A kind's name with its indefinite article, for messages built from kind names: "an
 * ApiDefinition", "an OrgKey", "a ClientType" (by the kind name's first letter: every kind is
 * named in PascalCase, and none starts with a vowel letter sounded as a consonant).
 */
export function aKind(kind: string): string {
  return `${/^[AEIOU]/.test(kind) ? "an" : "a"} ${kind}`;
}
