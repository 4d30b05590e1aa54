/** Fixtures: what the sandbox holds at start that the interfaces cannot create. */
import { readFile } from "node:fs/promises";
import { ErrorCode, UsageError, ValidationFailed } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { Locator } from "../load/yaml-locator.js";
import { decodeText, parseYaml } from "../load/yaml-reader.js";
import { formatPath } from "../text/field-path.js";
import { SchemaRegistry } from "../validate/schema/schema-registry.js";

export interface FixtureApi {
  readonly id: string;
  readonly name?: string;
  readonly listenPath: string;
  readonly strip?: boolean;
  readonly upstream?: string;
  readonly active?: boolean;
  readonly authentication?: boolean;
  readonly batchProcessing?: boolean;
  readonly mockResponse?: boolean;
  readonly document?: Record<string, unknown>;
}

export interface FixtureOAuthClient {
  readonly apiId: string;
  readonly clientId: string;
  readonly secret?: string;
  readonly redirect_uri?: string;
  readonly policy_id?: string;
  readonly description?: string;
  readonly meta_data?: Record<string, unknown> | null;
  readonly tokens?: number;
}

export type ProviderType = "Keycloak" | "Gluu" | "Other" | "AppType";

export interface FixtureProvider {
  readonly id: number;
  readonly name?: string;
  readonly type: ProviderType;
  readonly clientTypes?: ReadonlyArray<Record<string, unknown> & { ID: number; Name: string }>;
}

/** A policy: by id alone (its access rights include every API), or with the APIs they include. */
export type FixturePolicy = string | { readonly id: string; readonly apis: readonly string[] };

export interface Named {
  readonly id: number;
  readonly name: string;
}

export interface Fixtures {
  readonly apis?: readonly FixtureApi[];
  readonly policies?: readonly FixturePolicy[];
  readonly oauthClients?: readonly FixtureOAuthClient[];
  readonly providers?: readonly FixtureProvider[];
  readonly catalogues?: readonly Named[];
  readonly tags?: readonly Named[];
  readonly templates?: readonly Named[];
  readonly keys?: ReadonlyArray<{ readonly key: string; readonly apis: readonly string[] }>;
}

/** Checks fixtures given as data (programmatic use). */
export function checkFixtures(value: unknown, file = "fixtures", schemas = new SchemaRegistry(), text?: string): Fixtures {
  const locator = text === undefined ? undefined : new Locator(new Map([[file, text]]));
  const diagnostics: Diagnostic[] = schemas.validate("sandbox-fixtures.schema.json", value).map((issue) => ({
    severity: "error",
    code: ErrorCode.CONFIG_INVALID,
    file,
    path: formatPath(issue.path),
    ...locator?.locate(file, 0, issue.path, { key: issue.key }),
    message: issue.message,
    hint: issue.hint,
  }));
  if (diagnostics.length > 0) throw new ValidationFailed(diagnostics);
  return value as Fixtures;
}

export async function loadFixtures(file: string): Promise<Fixtures> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new UsageError(
      `cannot read the fixtures file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      "give a YAML file of APIs, OAuth clients, providers, policies and keys (see examples/sandbox-fixtures.yaml)",
    );
  }
  const decoded = decodeText(bytes, file);
  if ("diagnostic" in decoded) throw new ValidationFailed([decoded.diagnostic]);
  const parsed = parseYaml(decoded.text, file);
  if (parsed.diagnostics.length > 0) throw new ValidationFailed(parsed.diagnostics);
  return checkFixtures(parsed.documents[0]?.value ?? {}, file, new SchemaRegistry(), decoded.text);
}
