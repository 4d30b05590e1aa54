/**
 * The secret scope: which environment variables and files resources may read. gatesync.yaml
 * lists the variables (`secrets.env`) and/or a name prefix (`secrets.envPrefix`); nothing else
 * resolves. gatesync's own credentials are refused even when listed, and so is every file the
 * config itself uses, so a merged commit cannot send gatesync's keys anywhere (which settings
 * name them: `config/credentials.ts`).
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { isInside } from "../file-paths.js";
import type { CredentialFile, CredentialVariable } from "./credentials.js";
import { defaultAgeKeys } from "./sops/sops-age.js";
import type { AgeKeySettings } from "./sops/sops-age.js";

export interface SecretScope {
  readonly env: ReadonlySet<string>;
  readonly envPrefix: string | undefined;
  /** Variables refused whatever the lists say: name → the setting that names it. */
  readonly reservedEnv: ReadonlyMap<string, string>;
  /** Files refused (each as written and as its real path). */
  readonly reservedFiles: readonly CredentialFile[];
  /** Where `${sops:}` takes this environment's age identities (default: SOPS_AGE_KEY, SOPS_AGE_KEY_FILE). */
  readonly sopsKeys: AgeKeySettings;
}

/** Why a reference falls outside the scope, and the setting that would allow it. */
export interface ScopeRefusal {
  readonly message: string;
  readonly allow: string;
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
};

/** What a scope is made of: the variables allowed (by name or prefix) and gatesync's own credentials, refused. */
export interface ScopeSettings {
  readonly env: readonly string[];
  readonly envPrefix: string | undefined;
  readonly reservedVariables: readonly CredentialVariable[];
  readonly reservedFiles: readonly CredentialFile[];
  readonly sopsKeys?: AgeKeySettings;
}

export function secretScope(settings: ScopeSettings): SecretScope {
  const sopsKeys = settings.sopsKeys ?? defaultAgeKeys;
  // the age identities decrypt every SOPS file of the environment: no resource may read them
  const ageKeyVariables = [sopsKeys.keyEnv, sopsKeys.keyFileEnv].flatMap((name) =>
    name === undefined ? [] : [[name, "the age identities of ${sops:}"] as const],
  );
  return {
    sopsKeys,
    env: new Set(settings.env),
    envPrefix: settings.envPrefix,
    reservedEnv: new Map([...ageKeyVariables, ...settings.reservedVariables.map((v) => [v.name, v.setting] as const)]),
    // as written and as the real path: a reference is checked before and after its links resolve
    reservedFiles: settings.reservedFiles.flatMap((f) => [f, { ...f, path: real(f.path) }]),
  };
}

/** Undefined when `${env:NAME}` may resolve. */
export function envRefusal(scope: SecretScope, name: string): ScopeRefusal | undefined {
  const reserved = scope.reservedEnv.get(name);
  if (reserved !== undefined) {
    return {
      message: `\${env:${name}} reads gatesync's own credential (${reserved}): resources may never read it, even when secrets.env lists it`,
      allow: "give the resource its own variable holding the value it needs, and list that one in secrets.env",
    };
  }
  if (scope.env.has(name) || (scope.envPrefix !== undefined && name.startsWith(scope.envPrefix))) return undefined;
  return {
    message: `\${env:${name}} is outside the secret scope: gatesync.yaml does not allow resources to read ${name}`,
    allow: `add ${name} to secrets.env in gatesync.yaml${scope.envPrefix === undefined ? " (or name the variables with a prefix and set secrets.envPrefix)" : ` (or rename it to start with secrets.envPrefix ${scope.envPrefix})`}`,
  };
}

/** Undefined when the file at real path `file` may be read by `${file:}`. */
export function fileRefusal(scope: SecretScope, file: string): ScopeRefusal | undefined {
  for (const f of scope.reservedFiles) {
    const hit =
      f.match === "tree"
        ? isInside(file, f.path)
        : f.match === "prefix"
          ? path.dirname(file) === path.dirname(f.path) && path.basename(file).startsWith(path.basename(f.path))
          : file === f.path;
    if (hit) {
      return {
        message: `the file is one gatesync itself uses (${f.setting}): resources may never read it`,
        allow: "put the value the resource needs in a file of its own below secrets.fileRoot",
      };
    }
  }
  return undefined;
}
