/**
 * Two teams' configurations side by side on one sandbox gateway (docs/user/teams.md): each its
 * own directory, gatesync.yaml, resources and state, their states in one directory so that they
 * share the ownership registry beside them (SQLite) — or one PostgreSQL database (`postgres`).
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";

export interface TeamOptions {
  readonly owner?: string;
  readonly orphans?: "report" | "deactivate";
  /** A PostgreSQL state: the schema (the URL in GATESYNC_TEST_PG_URL's variable PG_URL). */
  readonly schema?: string;
  /** Further top-level lines of gatesync.yaml. */
  readonly extra?: string;
}

/** A team's gatesync.yaml: its owner, its state (in `states/`, shared by the teams), the sandbox's gateway. */
export const teamConfig = (name: string, sandbox: SandboxHandle, o: TeamOptions = {}): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
${o.schema === undefined ? `state: { backend: sqlite, path: ../states/${name}.db }` : `state: { backend: postgres, urlEnv: PG_URL, schema: ${o.schema} }`}
${o.owner === undefined ? "" : `owner: ${o.owner}`}
orphans: ${o.orphans ?? "report"}
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
${o.extra ?? ""}
`;

/** Writes a team's directory: gatesync.yaml and its resource files (replacing the old ones). */
export async function writeTeam(dir: string, name: string, config: string, files: Record<string, string>): Promise<string> {
  const root = path.join(dir, name);
  await rm(path.join(root, "config"), { recursive: true, force: true });
  await mkdir(path.join(root, "config"), { recursive: true });
  await writeFile(path.join(root, "gatesync.yaml"), config);
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(root, "config", file), text);
  return path.join(root, "gatesync.yaml");
}

interface SandboxOrgKey {
  readonly keyId: string;
  readonly session: { readonly rate?: unknown; readonly is_inactive?: unknown };
  readonly writes: number;
}

/** The sandbox's org keys by id. */
export function orgKeysOf(sandbox: SandboxHandle): Map<string, SandboxOrgKey> {
  const keys = (sandbox.inspect.objects() as { orgKeys?: SandboxOrgKey[] }).orgKeys ?? [];
  return new Map(keys.map((k) => [k.keyId, k]));
}

/** How many calls the sandbox answered, all interfaces. */
export function callsOf(sandbox: SandboxHandle): number {
  return Object.values(sandbox.inspect.calls().counts).reduce((sum, c) => sum + c.total, 0);
}
