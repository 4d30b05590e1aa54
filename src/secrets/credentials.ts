/**
 * gatesync's own credentials, as gatesync.yaml names them: the variables that hold them and the
 * files the config itself uses. They are registered with the redaction layer when read, and
 * resources may never reference them (see scope.ts).
 */
import type { GatesyncConfig } from "../config/config.js";
import { registerSecret } from "../redactor.js";
import { notificationVariables } from "../config/notifications.js";

/** The variable that holds the key of the keyed hashes (see plan/desired.ts). */
export const hashKeyVariable = "GATESYNC_HASH_KEY";

export interface CredentialVariable {
  readonly name: string;
  /** The setting of gatesync.yaml that names it. */
  readonly setting: string;
}

export interface CredentialFile {
  readonly path: string;
  readonly setting: string;
  /** `file`: this file; `prefix`: this file and its siblings named after it (journal, backups); `tree`: everything below. */
  readonly match: "file" | "prefix" | "tree";
}

/** The variable `gatesync plan --state-url` reads its bearer token from. */
export const stateTokenVariable = "GATESYNC_STATE_TOKEN";

/** Every variable gatesync.yaml names for gatesync's own credentials, tokens and keys. */
export function credentialVariables(config: GatesyncConfig): CredentialVariable[] {
  const t = config.targets;
  const found: Array<[string | undefined, string]> = [
    [t.gateway?.credentialEnv, "targets.gateway.credentialEnv"],
    [t.gateway?.batch?.keyEnv, "targets.gateway.batch.keyEnv"],
    [t.portal?.credentialEnv, "targets.portal.credentialEnv"],
    [t.dashboard?.tokenEnv, "targets.dashboard.tokenEnv"],
    [t.llm?.credentialEnv, "targets.llm.credentialEnv"],
    [config.source.type === "git" ? config.source.tokenEnv : undefined, "source.git.tokenEnv"],
    [config.state.backend === "postgres" ? config.state.urlEnv : undefined, "state.urlEnv"],
    [config.server.webhookSecretEnv, "server.webhookSecretEnv"],
    [config.server.syncTokenEnv, "server.syncTokenEnv"],
    [config.server.stateTokenEnv, "server.stateTokenEnv"],
    // the token a merge-request plan fetches the daemon's state with (plan --state-url)
    [stateTokenVariable, "the state token of plan --state-url (GATESYNC_STATE_TOKEN)"],
    [hashKeyVariable, "the hash key (GATESYNC_HASH_KEY)"],
  ];
  const own = [...found.flatMap(([name, setting]) => (name === undefined ? [] : [{ name, setting }])), ...notificationVariables(config.notifications)];
  const names = new Set(own.map((v) => v.name));
  // the other environments' credentials (docs/user/environments.md), each named once
  const others = (config.otherEnvironments ?? []).flatMap((o) =>
    credentialVariables(o).map((v) => ({ ...v, setting: `environment ${o.environment ?? ""}: ${v.setting}` })),
  );
  return [...own, ...others.filter((v) => !names.has(v.name) && names.add(v.name))];
}

/** Every file the config itself uses: none may be read by `${file:}`. */
export function credentialFiles(config: GatesyncConfig): CredentialFile[] {
  const files: CredentialFile[] = [];
  if (config.file !== undefined) files.push({ path: config.file, setting: "gatesync.yaml itself", match: "file" });
  if (config.source.type === "git") {
    if (config.source.sshKeyFile !== undefined) files.push({ path: config.source.sshKeyFile, setting: "source.git.sshKeyFile", match: "prefix" });
    files.push({ path: config.source.cacheDir, setting: "source.git.cacheDir", match: "tree" });
  }
  if (config.state.backend === "sqlite") files.push({ path: config.state.path, setting: "state.path", match: "prefix" });
  for (const o of config.otherEnvironments ?? []) {
    if (o.state.backend === "sqlite") files.push({ path: o.state.path, setting: `environment ${o.environment ?? ""}: state.path`, match: "prefix" });
  }
  return files;
}

/** The parts of a URL's user information (decoded and as written), when it has any. */
export function urlCredentials(url: string): string[] {
  try {
    const u = new URL(url);
    return [u.username, u.password, decodeURIComponent(u.username), decodeURIComponent(u.password)].filter((s) => s !== "");
  } catch {
    return [];
  }
}

/**
 * Registers every credential in force with the redaction layer: the values of the variables
 * above, the user information of the git and PostgreSQL URLs, and the header a git token
 * travels in. Returns the variables whose value is too short to be scrubbed.
 */
export function registerCredentials(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>): string[] {
  const short: string[] = [];
  for (const v of credentialVariables(config)) {
    const value = env[v.name];
    if (value === undefined || value === "") continue;
    if (!registerSecret(value)) short.push(v.name);
    if (v.setting === "state.urlEnv") urlCredentials(value).forEach(registerSecret);
    if (v.setting === "source.git.tokenEnv") registerSecret(gitTokenHeader(value));
  }
  if (config.source.type === "git") urlCredentials(config.source.url).forEach(registerSecret);
  return short;
}

/** The HTTP basic credential a git token is sent as (a server may echo it). */
export function gitTokenHeader(token: string): string {
  return Buffer.from(`gatesync:${token}`).toString("base64");
}
