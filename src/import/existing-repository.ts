/**
 * What a repository already declares, for `--merge`: each resource's kind, name, file and the
 * object it stands for (its id, or the server id it adopts), read from the resource files below
 * `config/`. An object already declared keeps its name (the same file is written again, so a
 * second import changes nothing); one declared in a file import would not write is left alone.
 */
import { apiDefinitionKind } from "../kinds/api-definition.js";
import { clientTypeKind } from "../kinds/client-type.js";
import { oauthClientKind } from "../kinds/oauth-client.js";
import { orgKeyKind } from "../kinds/org-key.js";
import { readdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { toPosix } from "../file-paths.js";
import type { KindName } from "../kinds/kind.js";
import { adoptAnnotation } from "../plan/names/adopt-annotation.js";
import { boundedText, parseYamlDocuments } from "./bounded-input.js";
import type { InputLimits } from "./bounded-input.js";
import { isRecord } from "./model.js";

export interface Declared {
  readonly kind: KindName;
  readonly name: string;
  /** Relative to the repository, posix. */
  readonly file: string;
  readonly sourceId: string | undefined;
}

const adoptPrefix: Partial<Record<KindName, string>> = {
  ApiProduct: "product",
  PortalWebhook: "portal-webhook",
  DashboardWebhook: "dashboard-webhook",
  LlmSettings: "llm-settings",
};

function sourceIdOf(
  kind: KindName,
  spec: Record<string, unknown>,
  annotations: Record<string, unknown>,
  apiIds: ReadonlyMap<string, string>,
): string | undefined {
  const adopt = annotations[adoptAnnotation];
  if (adoptPrefix[kind] !== undefined) return typeof adopt === "string" ? `${adoptPrefix[kind]}:${adopt}` : undefined;
  switch (kind) {
    case apiDefinitionKind.kind:
      return `api:${String(spec.apiId)}`;
    case oauthClientKind.kind: {
      const apiId = typeof spec.apiRef === "string" ? apiIds.get(spec.apiRef) : spec.apiId;
      return `oauth-client:${String(apiId)}/${String(spec.clientId)}`;
    }
    case orgKeyKind.kind:
      return `org-key:${String(spec.keyId)}`;
    case clientTypeKind.kind:
      return `client-type:${String(spec.providerId)}/${String(spec.clientTypeId)}`;
    default:
      return undefined;
  }
}

export async function declaredResources(repository: string, limits: InputLimits): Promise<Declared[]> {
  const config = path.join(repository, "config");
  if (!existsSync(config)) return [];
  const files = (await readdir(config, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => toPosix(path.relative(repository, path.join(e.parentPath, e.name))))
    .sort()
    .slice(0, limits.maxFiles);
  const raw: { kind: KindName; name: string; file: string; spec: Record<string, unknown>; annotations: Record<string, unknown> }[] = [];
  for (const file of files) {
    const docs = parseYamlDocuments(boundedText(path.join(repository, file), limits), file, limits);
    for (const d of docs) {
      const v = d.value;
      if (!isRecord(v) || typeof v.kind !== "string" || !isRecord(v.metadata) || typeof v.metadata.name !== "string") continue;
      const annotations = isRecord(v.metadata.annotations) ? v.metadata.annotations : {};
      raw.push({ kind: v.kind as KindName, name: v.metadata.name, file, spec: isRecord(v.spec) ? v.spec : {}, annotations });
    }
  }
  const apiIds = new Map(raw.filter((r) => r.kind === apiDefinitionKind.kind).map((r) => [r.name, String(r.spec.apiId)]));
  return raw.map((r) => ({ kind: r.kind, name: r.name, file: r.file, sourceId: sourceIdOf(r.kind, r.spec, r.annotations, apiIds) }));
}
