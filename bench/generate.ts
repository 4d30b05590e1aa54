/**
 * Synthetic repositories for the benchmarks: `count` resources in a realistic mix of kinds,
 * ten per file, secrets by reference, and ApiDefinitions whose OpenAPI documents are
 * `definitionFile`s: each API its own document (a mutated corpus document: see
 * openapi-variants.ts), or — the old, flattering case, kept as one labelled row — five corpus
 * documents shared by all.
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Fixtures } from "../src/sandbox/fixtures.js";
import { parse } from "yaml";
import { loadCorpus, openApiVariant } from "./openapi-variants.js";

const shared = ["petstore-expanded.yaml", "uspto.yaml", "api-with-examples.yaml", "callback-example.yaml", "link-example.yaml"];

/** Own documents per API, five shared by all, or every other API its own and the rest the five shared ("mixed"). */
export type DocumentMode = "own" | "shared" | "mixed";

/** How a repository is laid out: its documents, their format, and resources per file. */
export interface Shape {
  readonly mode?: DocumentMode;
  /** The format the APIs' own documents are written in (default yaml). */
  readonly openapi?: "yaml" | "json";
  /** Resources per file (default 10). */
  readonly perFile?: number;
}

/** Whether the k-th API has its own document. */
const ownDocument = (mode: DocumentMode, k: number): boolean => mode === "own" || (mode === "mixed" && k % 2 === 0);

/** Share of each kind, per 100 resources. */
const mix: Array<[string, number]> = [
  ["ApiDefinition", 10],
  ["OAuthClient", 15],
  ["OrgKey", 40],
  ["ApiProduct", 10],
  ["PortalWebhook", 10],
  ["DashboardWebhook", 10],
  ["LlmSettings", 5],
];

/** The k-th ApiDefinition is the resource i = 100·⌊k/10⌋ + k mod 10 (the first ten of each hundred). */
function apiIndex(i: number): number {
  return Math.floor(i / 100) * 10 + (i % 100);
}

function resource(kind: string, i: number, apis: number, mode: DocumentMode, format: "yaml" | "json"): string {
  const name = kind === "ApiDefinition" ? `api-${apiIndex(i)}` : `${kind.toLowerCase()}-${i}`;
  const head = `apiVersion: gatesync.dev/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\n  labels: { team: team-${i % 17} }\nspec:\n`;
  // references name an ApiDefinition that exists
  const api = kind === "ApiDefinition" ? name : `api-${i % Math.max(1, apis)}`;
  switch (kind) {
    case "ApiDefinition":
      return `${head}  apiId: ${api}-id\n  definitionFile: ../openapi/${ownDocument(mode, apiIndex(i)) ? `${name}.${format}` : shared[i % shared.length]}\n  query: { listenPath: /${api}/, upstreamURL: "http://${api}.internal:8080", validateRequest: true }\n`;
    case "OAuthClient":
      return `${head}  apiRef: ${api}\n  clientId: client-${i}\n  description: Client ${i}\n  redirect_uri: https://app-${i}.example.com/callback\n  policy_id: policy-${i % 5}\n  meta_data: { tier: t${i % 3} }\n  secret: \${env:BENCH_SECRET}\n`;
    case "OrgKey":
      return `${head}  keyId: org-${i}\n  org_id: org-${i}\n  alias: Org ${i}\n  rate: ${100 + (i % 900)}\n  per: 60\n  quota_max: ${10_000 + i}\n  quota_renewal_rate: 2592000\n  hmac_enabled: true\n  hmac_string: \${env:BENCH_SECRET}\n  tags: [bench, t${i % 7}]\n  access_rights:\n    main:\n      apiRef: ${api}\n      versions: [Default]\n      allowed_urls:\n        - { url: /items, methods: [GET, POST] }\n`;
    case "ApiProduct":
      return `${head}  Name: product-${i}\n  DisplayName: Product ${i}\n  Description: Synthetic product ${i}\n  ProviderID: 1\n  APIDetails:\n    - apiRef: ${api}\n      Description: main API\n  Catalogues: [1]\n  Scopes: read,write\n`;
    case "PortalWebhook":
      return `${head}  Name: hook ${i}\n  URL: "https://hooks.example.com/portal/${i}?token=\${env:BENCH_SECRET}"\n  Method: POST\n  Timeout: 10\n  Events: [AccessRequestApproved, UserRegistered]\n`;
    case "DashboardWebhook":
      return `${head}  name: dash-${i}\n  method: POST\n  target_path: https://hooks.example.com/dashboard/${i}\n  header_map: { Authorization: "Bearer \${env:BENCH_SECRET}" }\n`;
    default:
      return `${head}  attributes: { model_name: model-${i % 4}, temperature: 0.${i % 10}, max_tokens: ${256 + i}, stop_words: ["</a>"] }\n`;
  }
}

/** Kind of the i-th resource, following the mix. */
export function kindOf(i: number): string {
  let slot = i % 100;
  for (const [kind, share] of mix) {
    if (slot < share) return kind;
    slot -= share;
  }
  return "LlmSettings";
}

export interface Generated {
  readonly root: string;
  /** Every file below the root, resources and OpenAPI documents (relative paths). */
  readonly files: string[];
  readonly count: number;
  /** Sandbox fixtures holding what the repository refers to. */
  readonly fixtures: Fixtures;
}

/** Writes `count` resources under `dir/config` (10 per file unless the shape says otherwise) and the OpenAPI documents they use. */
export async function generateRepository(dir: string, count: number, oasDir: string, shape: DocumentMode | Shape = "own"): Promise<Generated> {
  const { mode = "own", openapi: format = "yaml", perFile = 10 } = typeof shape === "string" ? { mode: shape } : shape;
  const root = path.join(dir, "config");
  const apis = Math.floor(count / 100) * 10 + Math.min(10, count % 100);
  const files: string[] = [];
  for (let start = 0; start < count; start += perFile) {
    const kind = kindOf(start);
    const docs: string[] = [];
    for (let i = start; i < Math.min(count, start + perFile); i++) docs.push(resource(kindOf(i), i, apis, mode, format));
    const rel = `${kind.toLowerCase()}/part-${String(start / perFile).padStart(5, "0")}.yaml`;
    await mkdir(path.join(root, path.dirname(rel)), { recursive: true });
    await writeFile(path.join(root, rel), docs.join("---\n"));
    files.push(rel);
  }
  // definitionFile paths are relative to the resource file: one level below config/
  await mkdir(path.join(root, "openapi"), { recursive: true });
  if (mode !== "own") {
    for (const f of shared) await copyFile(path.join(oasDir, "3.0/pass", f), path.join(root, "openapi", f));
    files.push(...shared.map((f) => `openapi/${f}`));
  }
  if (mode !== "shared") {
    const corpus = loadCorpus(oasDir);
    for (let k = 0; k < apis; k++) {
      if (!ownDocument(mode, k)) continue;
      const text = openApiVariant(corpus, k);
      const file = `openapi/api-${k}.${format}`;
      await writeFile(path.join(root, file), format === "json" ? JSON.stringify(parse(text) as unknown, null, 2) : text);
      files.push(file);
    }
  }
  const oauthClients = [];
  for (let i = 0; i < count; i++) if (kindOf(i) === "OAuthClient") oauthClients.push({ apiId: `api-${i % Math.max(1, apis)}-id`, clientId: `client-${i}` });
  const fixtures: Fixtures = {
    apis: Array.from({ length: apis }, (_, k) => ({ id: `api-${k}-id`, listenPath: `/api-${k}/`, upstream: "http://upstream.invalid" })),
    policies: ["policy-0", "policy-1", "policy-2", "policy-3", "policy-4"],
    oauthClients,
    providers: [{ id: 1, type: "Keycloak" }],
    catalogues: [{ id: 1, name: "Public" }],
  };
  return { root, files, count, fixtures };
}
