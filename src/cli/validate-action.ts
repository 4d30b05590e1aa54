import path from "node:path";
import type { GatesyncConfig } from "../config/config.js";
import { UsageError, hasErrors } from "../errors.js";
import { EnvFileSecretSource } from "../secrets/env-file-source.js";
import { registerCredentials } from "../secrets/credentials.js";
import { secretScope } from "../secrets/scope.js";
import { RepositoryValidator } from "../validate/validate-repository.js";
import { rulesetsOf } from "../rules/prepare-rules.js";
import type { RepositoryResult } from "../validate/validate-repository.js";
import { renderValidation } from "./report.js";
import type { ReportFormat } from "./report.js";
import type { CliIo } from "./cli-io.js";
import { configIfPresent } from "./cli-io.js";
import { openResources } from "./resources.js";
import { inRepository, repositoryPrefix } from "../source/repository-path.js";

/**
 * Validates a resource directory with the settings of a config (when there is one). Without a
 * config there is no secret scope to check: `validate --config` (and plan) check it.
 */
export async function validateDirectory(
  dir: string,
  config: GatesyncConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
  validator: RepositoryValidator = RepositoryValidator.oneShot(),
  boundary?: string,
): Promise<RepositoryResult & { valid: boolean }> {
  const fileRoot = config?.secrets.fileRoot ?? path.resolve(dir);
  if (config !== undefined) registerCredentials(config, env);
  const rules = await rulesetsOf(config);
  const result = await validator.validate({
    ...(rules === undefined ? {} : { rules }),
    root: dir,
    ...(boundary === undefined ? {} : { boundary }),
    ...(config === undefined ? {} : { limits: config.limits }),
    ...(config?.targets.portal === undefined ? {} : { appTypeProviders: new Set(config.targets.portal.appTypeProviders) }),
    secrets: { source: new EnvFileSecretSource(env, fileRoot, config === undefined ? undefined : secretScope(config)), missing: "warning" },
  });
  // files named from the repository's root, in every format: the paths a user opens and CI annotates
  return { ...result, diagnostics: inRepository(result.diagnostics, repositoryPrefix(dir, boundary)), valid: !hasErrors(result.diagnostics) };
}

/** `gatesync validate [dir]`. */
export async function validateAction(dir: string | undefined, opts: { config?: string; format: ReportFormat }, io: CliIo): Promise<void> {
  const config = await configIfPresent(opts.config);
  if (dir === undefined && config === undefined) {
    throw new UsageError(
      "no directory to validate: give one, or run where gatesync.yaml is (or pass --config FILE)",
      "gatesync validate config/   (or `gatesync init` to scaffold a repository with a gatesync.yaml)",
    );
  }
  const resources =
    dir === undefined ? await openResources(config!, io.env, undefined) : { input: { root: path.resolve(dir) }, close: async () => Promise.resolve() };
  try {
    const { root, boundary } = resources.input as { root: string; boundary?: string };
    const result = await validateDirectory(root, config, io.env, undefined, boundary);
    const report = { valid: result.valid, files: result.files, resources: result.resources.length, diagnostics: result.diagnostics };
    io.stdout(renderValidation(report, opts.format, io.isTty && io.env.NO_COLOR === undefined));
    process.exitCode = result.valid ? 0 : 1;
  } finally {
    await resources.close();
  }
}
