/** The sandbox's objects, in memory, seeded from fixtures. */
import type { Fixtures, Named, ProviderType } from "./fixtures.js";

export type Json = Record<string, unknown>;

export interface StoredApi {
  readonly id: string;
  /** The OpenAPI document without the gateway extension. */
  document: Json | undefined;
  /** `x-gw-api-gateway`: info (id, name, state), server (listenPath, authentication, batchProcessing, customDomain), upstream. */
  extension: Json;
  /** Middleware selected by operation 1's flags, for all endpoints. */
  flags: { allowList: boolean; validateRequest: boolean; mockResponse: boolean };
}

export interface StoredOAuthClient {
  readonly apiId: string;
  readonly client_id: string;
  secret: string;
  redirect_uri: string;
  policy_id: string;
  meta_data: Json | null;
  description: string;
  tokens: number;
  revokedTokens: number;
}

export interface StoredProvider {
  readonly id: number;
  readonly name: string;
  readonly type: ProviderType;
  readonly clientTypes: Map<number, Json>;
}

export interface StoredOrgKey {
  readonly keyId: string;
  session: Json;
  usedQuota: number;
  quotaResets: number;
  writes: number;
}

/** `YYYY-MM-DD HH:MM` in UTC, the portal's timestamp form. */
export function portalTimestamp(date: Date): string {
  return date.toISOString().slice(0, 16).replace("T", " ");
}

type FixtureApi = NonNullable<Fixtures["apis"]>[number];
type FixtureOauthClient = NonNullable<Fixtures["oauthClients"]>[number];

/** An API of the fixtures as the gateway holds it (`${sandbox}` in its upstream: the sandbox's own URL). */
function fixtureApi(a: FixtureApi, selfUrl: () => string): StoredApi {
  return {
    id: a.id,
    document: a.document === undefined ? undefined : structuredClone(a.document),
    extension: {
      info: { id: a.id, name: a.name ?? a.id, state: { active: a.active ?? true } },
      server: {
        listenPath: { value: a.listenPath, strip: a.strip ?? true },
        authentication: { enabled: a.authentication ?? false },
        batchProcessing: { enabled: a.batchProcessing ?? false },
      },
      ...(a.upstream === undefined ? {} : { upstream: { url: a.upstream.replace("${sandbox}", selfUrl()) } }),
    },
    flags: { allowList: false, validateRequest: false, mockResponse: a.mockResponse ?? false },
  };
}

function fixtureOauthClient(c: FixtureOauthClient): StoredOAuthClient {
  return {
    apiId: c.apiId,
    client_id: c.clientId,
    secret: c.secret ?? "",
    redirect_uri: c.redirect_uri ?? "",
    policy_id: c.policy_id ?? "",
    meta_data: c.meta_data ?? null,
    description: c.description ?? "",
    tokens: c.tokens ?? 0,
    revokedTokens: 0,
  };
}

export class SandboxStore {
  apis = new Map<string, StoredApi>();
  /** Grows whenever an API's listen path changes (a patch): traffic routing indexes the APIs by listen path. */
  apiRevision = 0;
  /** Policy id → the APIs its access rights include (`all`: a policy given by id alone). */
  policies = new Map<string, ReadonlySet<string> | "all">();
  oauthClients = new Map<string, StoredOAuthClient>();
  providers = new Map<number, StoredProvider>();
  catalogues = new Map<number, string>();
  tags = new Map<number, string>();
  templates = new Map<number, string>();
  /** API key → ids of the APIs it opens. */
  keys = new Map<string, Set<string>>();
  products = new Map<number, Json>();
  portalWebhooks = new Map<string, Json>();
  dashboardHooks: Json[] = [];
  llmSettings = new Map<string, Json>();
  orgKeys = new Map<string, StoredOrgKey>();
  private nextId = 1;

  constructor(
    private readonly fixtures: Fixtures,
    private readonly selfUrl: () => string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.reset();
  }

  /** Back to the fixtures: everything created or changed since is forgotten. */
  reset(): void {
    const f = this.fixtures;
    this.apis = new Map((f.apis ?? []).map((a) => [a.id, fixtureApi(a, () => this.selfUrl())]));
    this.policies = new Map(
      (f.policies ?? []).map((p): [string, ReadonlySet<string> | "all"] => (typeof p === "string" ? [p, "all"] : [p.id, new Set(p.apis)])),
    );
    this.oauthClients = new Map((f.oauthClients ?? []).map((c) => [oauthKey(c.apiId, c.clientId), fixtureOauthClient(c)]));
    const created = portalTimestamp(this.now());
    this.providers = new Map(
      (f.providers ?? []).map((p) => [
        p.id,
        {
          id: p.id,
          name: p.name ?? `provider-${p.id}`,
          type: p.type,
          clientTypes: new Map((p.clientTypes ?? []).map((ct) => [ct.ID, { CreatedAt: created, UpdatedAt: created, ...structuredClone(ct) }])),
        },
      ]),
    );
    const named = (list: readonly Named[] | undefined): Map<number, string> => new Map((list ?? []).map((n) => [n.id, n.name]));
    this.catalogues = named(f.catalogues);
    this.tags = named(f.tags);
    this.templates = named(f.templates);
    this.keys = new Map((f.keys ?? []).map((k) => [k.key, new Set(k.apis)]));
    this.products = new Map();
    this.portalWebhooks = new Map();
    this.dashboardHooks = [];
    this.llmSettings = new Map();
    this.orgKeys = new Map();
    this.nextId = 1;
  }

  newId(): number {
    return this.nextId++;
  }

  timestamp(): string {
    return portalTimestamp(this.now());
  }

  /** Everything, as plain JSON (credentials and secrets included: this is a test double). */
  snapshot(): Json {
    const values = <T>(m: Map<unknown, T>): T[] => [...m.values()];
    return structuredClone({
      apis: values(this.apis),
      oauthClients: values(this.oauthClients),
      clientTypes: [...this.providers.values()].flatMap((p) => [...p.clientTypes.values()].map((ct) => ({ providerId: p.id, ...ct }))),
      products: values(this.products),
      portalWebhooks: values(this.portalWebhooks),
      dashboardHooks: this.dashboardHooks,
      llmSettings: values(this.llmSettings),
      orgKeys: values(this.orgKeys),
    });
  }
}

export function oauthKey(apiId: string, clientId: string): string {
  return `${apiId}\0${clientId}`;
}
