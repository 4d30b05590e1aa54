import { realpathSync } from "node:fs";
import path from "node:path";
import type { GatesyncConfig } from "../../../config/config.js";
import { ErrorCode, UsageError, compareDiagnostics, hasErrors } from "../../../errors.js";
import type { Diagnostic } from "../../../errors.js";
import { environmentsForFlag } from "../../common/environment-option.js";
import { SecretResolver } from "../../../secrets/resolver.js";
import { registerCredentials } from "../../../config/credentials.js";
import { runSecretSource } from "../../../source/secret-roots.js";
import { ignoredByGit } from "../../../source/ignored-files.js";
import { isInside, toPosix } from "../../../file-paths.js";
import { shellWord } from "../../../printed-commands.js";
import { RepositoryValidator } from "../../../validate/repository/repository-validator.js";
import { rulesetsOf } from "../../../rules/prepare-rules.js";
import { batchRouteOf, valuesOptionsOf } from "../../../config/environments.js";
import type { RepositoryResult } from "../../../validate/repository/repository-validator.js";
import { renderValidation } from "../../common/report.js";
import type { ReportFormat } from "../../common/report.js";
import type { CliIo } from "../../common/cli-io.js";
import { configIfPresent } from "../../common/cli-io.js";
import { resourcesPerRef } from "../../common/resources.js";
import { inRepository, repositoryPrefix, workTreeOf } from "../../../source/repository-path.js";
import { commandSettings, forMergeRequest } from "../../common/command-settings.js";
import { anyInside, onlyFilesOf, onlyFindingsOf } from "./only-files.js";
import type { OwnershipCheck } from "./ownership-findings.js";

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
  if (config !== undefined) registerCredentials(config, env);
  const secrets = runSecretSource(config, env, { root: dir, boundary });
  const rules = await rulesetsOf(config);
  const prefix = repositoryPrefix(dir, boundary);
  const result = await validator.validate({
    ...(rules === undefined ? {} : { rules }),
    root: dir,
    ...(boundary === undefined ? {} : { boundary }),
    repositoryPrefix: prefix,
    ...(config === undefined ? {} : { limits: config.limits, ...valuesOptionsOf(config), ...batchRouteOf(config) }),
    ...(config?.targets.portal === undefined ? {} : { appTypeProviders: new Set(config.targets.portal.appTypeProviders) }),
    secrets: { source: new SecretResolver(secrets), missing: "warning" },
  });
  // a fetched commit's files are committed: only a work tree's can be ignored
  const ignored = boundary === undefined ? await ignoredSopsFiles(secrets.sopsFilesRead(), dir) : [];
  // files named from the repository's root, in every format: the paths a user opens and CI annotates
  return { ...result, diagnostics: [...inRepository(result.diagnostics, prefix), ...ignored], valid: !hasErrors(result.diagnostics) };
}

/**
 * The SOPS files the references read that git ignores in the work tree holding `dir`: `git add
 * -A` leaves them out, so the commit a daemon runs has none of them (SOPS_FILE_IGNORED, at the
 * file, named from the repository's root, with the pattern that ignores it).
 */
async function ignoredSopsFiles(read: readonly string[], dir: string): Promise<Diagnostic[]> {
  const top = workTreeOf(realpathSync(path.resolve(dir)));
  if (top === undefined) return [];
  const inside = read.filter((f) => isInside(f, top));
  const ignored = await ignoredByGit(inside, top);
  return [...ignored].map(([file, by]) => {
    const shown = toPosix(path.relative(top, file));
    return {
      severity: "warning" as const,
      code: ErrorCode.SOPS_FILE_IGNORED,
      file: shown,
      line: 1,
      column: 1,
      message: `${shown} is a SOPS file a reference reads, but git ignores it (${toPosix(by.source)}:${by.line}: \`${by.pattern}\`): \`git add -A\` leaves it out, and a daemon reading the commit does not find it`,
      hint: `keep encrypted files in and plaintext out: add the lines ${keepLines(shown)
        .map((l) => `\`${l}\``)
        .join(", ")} at the end of ${toPosix(by.source)} (as \`gatesync init\` writes it), then \`git add -- ${shellWord(shown)}\``,
    };
  });
}

/**
 * The .gitignore lines that keep the encrypted files below a SOPS file's top directory in and
 * every other file there out (what init writes for secrets/), whatever ignored it before; a file
 * at the repository's root: that file alone.
 */
function keepLines(file: string): string[] {
  if (!file.includes("/")) return [`!/${file}`];
  const top = `${file.split("/")[0]!}/`;
  return [`${top}**`, `!${top}**/`, `!${top}**/*.enc.yaml`, `!${top}**/*.enc.yml`, `!${top}**/*.enc.json`];
}

/** `gatesync validate [dir]`: every environment without --env, else the one it names. */
export async function validateAction(
  dir: string | undefined,
  opts: { config?: string; format: ReportFormat; env?: string; only?: string[]; stateUrl?: string },
  io: CliIo,
): Promise<void> {
  if (opts.only !== undefined && dir === undefined)
    throw new UsageError("--only needs the resource directory", "gatesync validate config --only config/a.yaml");
  // none of the named files (a commit's staged files) is a resource file: nothing to check
  if (opts.only !== undefined && !anyInside(opts.only, dir!)) {
    io.stdout(renderValidation({ valid: true, files: 0, resources: 0, diagnostics: [] }, opts.format, false));
    process.exitCode = 0;
    return;
  }
  const config = await configIfPresent(opts.config);
  if (opts.env !== undefined && config === undefined) throw new UsageError("--env needs gatesync.yaml", "run where gatesync.yaml is, or pass --config FILE");
  if (dir === undefined && config === undefined) {
    throw new UsageError(
      "no directory to validate: give one, or run where gatesync.yaml is (or pass --config FILE)",
      "gatesync validate config/   (or `gatesync init` to scaffold a repository with a gatesync.yaml)",
    );
  }
  // without a directory, each environment's files at the commit it follows (`track:`), fetched as `plan` fetches them
  const perRef = dir === undefined ? resourcesPerRef(io.env, undefined) : undefined;
  const filesOf = async (c: GatesyncConfig | undefined): Promise<EnvironmentFiles> =>
    perRef === undefined || c === undefined ? { root: path.resolve(dir!) } : (await perRef.of(c)).input;
  try {
    // the operator settings of a repository's own gatesync.yaml are said by the daemon that ignores them, where their value differs
    // the ownership registry: the daemon's with its address, else the one beside the config's state
    // loaded only with a config to check as (a directory alone has no owner): it reaches the state backends and the daemon's client
    const owners = config === undefined ? undefined : await (await import("./ownership-findings.js")).ownershipSources(config, io.env, opts);
    const how = { fromSource: dir === undefined, mergeRequest: forMergeRequest(io.env), ...(owners === undefined ? {} : { owners }) };
    const result = await validateEnvironments(filesOf, config, opts.env, io.env, how);
    const only = opts.only === undefined ? undefined : onlyFilesOf(opts.only);
    const diagnostics = [...(owners?.notes ?? []), ...(only === undefined ? result.diagnostics : onlyFindingsOf(result.diagnostics, only))];
    const report = { valid: !hasErrors(diagnostics), files: result.files, resources: result.resources.length, diagnostics };
    io.stdout(renderValidation(report, opts.format, io.isTty && io.env.NO_COLOR === undefined));
    process.exitCode = report.valid ? 0 : 1;
  } finally {
    await perRef?.close();
  }
}

/** Where an environment's files are: a directory, or a fetched commit's sub-directory and its checkout. */
type EnvironmentFiles = { readonly root: string; readonly boundary?: string };

/**
 * Every environment `--env` names (all of them without it), each with its own values, patches
 * and secret scope, in its own files (`filesOf`); a finding several environments share is
 * reported once.
 */
export async function validateEnvironments(
  filesOf: (config: GatesyncConfig | undefined) => Promise<EnvironmentFiles>,
  config: GatesyncConfig | undefined,
  envName: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  how: { readonly fromSource: boolean; readonly mergeRequest: boolean; readonly owners?: OwnershipCheck } = { fromSource: false, mergeRequest: false },
): Promise<RepositoryResult & { valid: boolean }> {
  if (config === undefined) {
    const { root, boundary } = await filesOf(undefined);
    return validateDirectory(root, config, env, undefined, boundary);
  }
  const environments = environmentsForFlag(config, envName);
  let first: (RepositoryResult & { valid: boolean }) | undefined;
  const seen = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  for (const e of environments) {
    const { root, boundary } = await filesOf(e.config);
    const settings = await commandSettings(e.config, { root, ...(boundary === undefined ? {} : { boundary }) }, how);
    const validated = await validateDirectory(root, settings.config, env, undefined, boundary);
    const owned = await ownedElsewhere(how.owners, e.name, settings.config, validated.resources, env, {
      root,
      ...(boundary === undefined ? {} : { boundary }),
    });
    const result = { ...validated, diagnostics: [...settings.notes, ...validated.diagnostics, ...owned] };
    first ??= result;
    for (const d of result.diagnostics) {
      const key = JSON.stringify(d);
      if (!seen.has(key)) diagnostics.push(d);
      seen.add(key);
    }
  }
  return { ...first!, diagnostics: diagnostics.sort(compareDiagnostics), valid: !hasErrors(diagnostics) };
}

/** The OWNED_ELSEWHERE findings of one environment, where its registry can be read. */
async function ownedElsewhere(
  check: OwnershipCheck | undefined,
  name: string,
  config: GatesyncConfig,
  resources: RepositoryResult["resources"],
  env: Readonly<Record<string, string | undefined>>,
  at: EnvironmentFiles,
): Promise<Diagnostic[]> {
  const source = check?.of(name, config);
  return check === undefined || source === undefined ? [] : check.findings(resources, source, env, at);
}
