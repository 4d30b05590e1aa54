/**
 * Which settings of gatesync.yaml name gatesync's own credentials — the variables and the files
 * — and the secret scope the config gives resources. What a credential or a scope does is
 * `secrets/`; this file only reads the config for it.
 */
import { hashKeyVariable, registerCredentialValues, stateTokenVariable, promoteTokenVariable } from "../secrets/credentials.js";
import type { CredentialFile, CredentialVariable } from "../secrets/credentials.js";
import { defaultAgeKeys } from "../secrets/sops/sops-age.js";
import type { AgeKeySettings } from "../secrets/sops/sops-age.js";
import { secretScope as scopeOf } from "../secrets/scope.js";
import type { SecretScope } from "../secrets/scope.js";
import { targetCredentialVariables } from "./config-sections.js";
import type { GatesyncConfig } from "./config.js";
import { notificationVariables } from "./notifications.js";

/** Every variable gatesync.yaml names for gatesync's own credentials, tokens and keys. */
export function credentialVariables(config: GatesyncConfig): CredentialVariable[] {
  const own = ownVariables(config);
  const names = new Set(own.map((v) => v.name));
  // the other environments' credentials (docs/user/environments.md), each named once
  return [...own, ...fleetVariables(config.fleet).filter((v) => !names.has(v.name))];
}

function ownVariables(config: GatesyncConfig): CredentialVariable[] {
  const t = config.targets;
  const found: Array<[string | undefined, string, CredentialVariable["form"]?]> = [
    ...targetCredentialVariables(t).map((v): [string, string] => [v.name, v.setting]),
    [t.gateway?.batch?.keyEnv, "targets.gateway.batch.keyEnv"],
    [config.source.type === "git" ? config.source.tokenEnv : undefined, "source.git.tokenEnv", "git-token"],
    [config.state.backend === "postgres" ? config.state.urlEnv : undefined, "state.urlEnv", "url"],
    [config.server.webhookSecretEnv, "server.webhookSecretEnv"],
    [config.server.syncTokenEnv, "server.syncTokenEnv"],
    [config.server.stateTokenEnv, "server.stateTokenEnv"],
    [config.server.promoteTokenEnv, "server.promoteTokenEnv"],
    // the environment's age identities: every other environment's resources are refused them too
    [config.secrets.sopsAgeKeyEnv, "secrets.sopsAgeKeyEnv"],
    [config.telemetry?.traces?.headersEnv, "telemetry.traces.headersEnv"],
    // the token a merge-request plan fetches the daemon's state with (plan --state-url)
    [stateTokenVariable, "the state token of plan --state-url (GATESYNC_STATE_TOKEN)"],
    [promoteTokenVariable, "the promotion token of gatesync promote (GATESYNC_PROMOTE_TOKEN)"],
    [hashKeyVariable, "the hash key (GATESYNC_HASH_KEY)"],
  ];
  return [
    ...found.flatMap(([name, setting, form]) => (name === undefined ? [] : [{ name, setting, ...(form === undefined ? {} : { form }) }])),
    ...notificationVariables(config.notifications),
  ];
}

/**
 * The fleet's variables, each named once with the first environment naming it, worked out once
 * per fleet: every run of every environment reads them (its secret scope, the redaction layer),
 * and walking the fleet on each made a fleet's runs cost environments × environments. An
 * environment's own variables come first where it is read (`credentialVariables`), so the
 * environment a shared variable is said to be of is the first other one, as it always was.
 */
const fleetVariablesOf = new WeakMap<readonly GatesyncConfig[], readonly CredentialVariable[]>();
function fleetVariables(fleet: readonly GatesyncConfig[] | undefined): readonly CredentialVariable[] {
  if (fleet === undefined) return [];
  let found = fleetVariablesOf.get(fleet);
  if (found === undefined) {
    const names = new Set<string>();
    found = fleet
      .flatMap((o) => ownVariables(o).map((v) => ({ ...v, setting: `environment ${o.environment ?? ""}: ${v.setting}` })))
      .filter((v) => !names.has(v.name) && names.add(v.name));
    fleetVariablesOf.set(fleet, found);
  }
  return found;
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
  if (config.secrets.sopsAgeKeyFile !== undefined) files.push({ path: config.secrets.sopsAgeKeyFile, setting: "secrets.sopsAgeKeyFile", match: "file" });
  // the others' files: one entry per environment with a state file or a key file (a fleet on PostgreSQL has none)
  for (const o of config.fleet ?? []) {
    if (o.environment === config.environment) continue;
    if (o.state.backend === "sqlite") files.push({ path: o.state.path, setting: `environment ${o.environment ?? ""}: state.path`, match: "prefix" });
    if (o.secrets.sopsAgeKeyFile !== undefined)
      files.push({ path: o.secrets.sopsAgeKeyFile, setting: `environment ${o.environment ?? ""}: secrets.sopsAgeKeyFile`, match: "file" });
  }
  return files;
}

/**
 * Registers every credential in force with the redaction layer: the values of the variables
 * above, the user information of the git and PostgreSQL URLs, and the header a git token
 * travels in. Returns the variables whose value is too short to be scrubbed.
 */
export function registerCredentials(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>): string[] {
  return registerCredentialValues(credentialVariables(config), env, config.source.type === "git" ? [config.source.url] : []);
}

/** The secret scope of the config: what resources may read (secrets.env, secrets.envPrefix), gatesync's own credentials refused. */
export function secretScope(config: GatesyncConfig): SecretScope {
  return scopeOf({
    env: config.secrets.env,
    envPrefix: config.secrets.envPrefix,
    reservedVariables: credentialVariables(config),
    reservedFiles: credentialFiles(config),
    sopsKeys: ageKeysOf(config.secrets),
  });
}

/** The age identities of a scope: what it names, or where sops itself looks when it names nothing. */
function ageKeysOf(secrets: GatesyncConfig["secrets"]): AgeKeySettings {
  if (secrets.sopsAgeKeyEnv === undefined && secrets.sopsAgeKeyFile === undefined) return defaultAgeKeys;
  return { keyEnv: secrets.sopsAgeKeyEnv, keyFileEnv: undefined, keyFile: secrets.sopsAgeKeyFile };
}
