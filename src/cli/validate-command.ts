import path from "node:path";
import type { GatesyncConfig } from "../config/config.js";
import { hasErrors } from "../errors.js";
import { EnvFileSecretSource } from "../load/secret-refs.js";
import { registerCredentials } from "../secrets/credentials.js";
import { secretScope } from "../secrets/scope.js";
import { RepositoryValidator } from "../validate/validate-repository.js";
import type { RepositoryResult } from "../validate/validate-repository.js";

/**
 * Validates a resource directory with the settings of a config (when there is one). Without a
 * config there is no secret scope to check: `validate --config` (and plan) check it.
 */
export async function validateDirectory(
  dir: string,
  config: GatesyncConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
  validator: RepositoryValidator = new RepositoryValidator(),
): Promise<RepositoryResult & { valid: boolean }> {
  const fileRoot = config?.secrets.fileRoot ?? path.resolve(dir);
  if (config !== undefined) registerCredentials(config, env);
  const result = await validator.validate({
    root: dir,
    ...(config === undefined ? {} : { limits: config.limits }),
    ...(config?.targets.portal === undefined ? {} : { appTypeProviders: new Set(config.targets.portal.appTypeProviders) }),
    secrets: { source: new EnvFileSecretSource(env, fileRoot, config === undefined ? undefined : secretScope(config)), missing: "warning" },
  });
  return { ...result, valid: !hasErrors(result.diagnostics) };
}
