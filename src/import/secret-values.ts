/**
 * Secret values out of the imported specs: each becomes a reference — `${env:NAME}` (names
 * listed in a generated `.env.example`, values nowhere), or `${sops:FILE#NAME}` with the value
 * encrypted in the environment's SOPS file — before anything is written or printed.
 */
import { dashboardWebhookKind } from "../kinds/dashboard-webhook.js";
import { oauthClientKind } from "../kinds/oauth-client.js";
import { orgKeyKind } from "../kinds/org-key.js";
import { portalWebhookKind } from "../kinds/portal-webhook.js";
import type { FoundSecret, ImportedResource } from "./model.js";
import { isRecord } from "./model.js";

/** Where the secrets of each kind sit, as [path, how to read the values there]. */
function secretSlots(r: ImportedResource): { path: string[]; all?: boolean }[] {
  switch (r.kind) {
    case oauthClientKind.kind:
      return [{ path: ["secret"] }];
    case orgKeyKind.kind:
      return [{ path: ["hmac_string"] }, { path: ["basic_auth_data", "password"] }, { path: ["jwt_data", "secret"] }];
    case dashboardWebhookKind.kind:
      return [{ path: ["header_map"], all: true }];
    case portalWebhookKind.kind:
      return [{ path: ["URL"] }];
    default:
      return [];
  }
}

/** A URL carries a credential in its user part or its query string. */
const urlCarriesSecret = (url: string): boolean => /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url) || url.includes("?");

const kindPrefix: Readonly<Record<string, string>> = {
  OAuthClient: "OAUTH_CLIENT",
  OrgKey: "ORG_KEY",
  DashboardWebhook: "DASHBOARD_WEBHOOK",
  PortalWebhook: "PORTAL_WEBHOOK",
};

const envPart = (s: string): string =>
  s
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");

export interface SecretNaming {
  /** The reference text written where the value was. */
  reference(name: string): string;
}

export const envNaming: SecretNaming = { reference: (name) => `\${env:${name}}` };

export const sopsNaming = (file: string): SecretNaming => ({ reference: (name) => `\${sops:${file}#${name}}` });

/**
 * The resources with every secret value replaced by a reference, and the values found (by
 * reference name, unique across the import). `taken` holds names already used.
 */
export function extractSecrets(
  resources: readonly ImportedResource[],
  naming: SecretNaming,
  taken: Set<string> = new Set(),
): { resources: ImportedResource[]; secrets: FoundSecret[]; byResource: Map<ImportedResource, string[]> } {
  const secrets: FoundSecret[] = [];
  const byResource = new Map<ImportedResource, string[]>();
  const out = resources.map((r) => {
    const spec = structuredClone(r.spec);
    const names: string[] = [];
    const take = (parts: string[], value: string): string => {
      const base = [kindPrefix[r.kind] ?? envPart(r.kind), envPart(r.name), ...parts.map(envPart)].filter((p) => p !== "").join("_");
      let name = base;
      for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
      taken.add(name);
      names.push(name);
      secrets.push({ name, value, field: parts.join(".") });
      return naming.reference(name);
    };
    for (const slot of secretSlots(r)) {
      const parentPath = slot.all === true ? slot.path : slot.path.slice(0, -1);
      let parent: unknown = spec;
      for (const p of parentPath) parent = isRecord(parent) ? parent[p] : undefined;
      if (!isRecord(parent)) continue;
      const keys = slot.all === true ? Object.keys(parent).sort() : [slot.path.at(-1)!];
      for (const key of keys) {
        const value = parent[key];
        if (typeof value !== "string" || value === "") continue;
        if (r.kind === portalWebhookKind.kind && !urlCarriesSecret(value)) continue;
        parent[key] = take(slot.all === true ? [...slot.path, key] : slot.path, value);
      }
    }
    const changed = { ...r, spec };
    byResource.set(changed, names);
    return changed;
  });
  return { resources: out, secrets, byResource };
}

/** `.env.example`: the variables' names, no value, sorted. */
export function envExample(names: readonly string[]): string {
  const lines = [...new Set(names)].sort().map((n) => `${n}=`);
  return `# The variables the imported resources read (\${env:NAME}); set each where gatesync runs.\n# No value is written here: gatesync import never writes one.\n${lines.join("\n")}\n`;
}
