/**
 * The settings a one-shot command (`plan`, `validate`) runs an environment with — the same as
 * the daemon's for the same files (issue 55):
 *
 * - reading the config's own source (no `--dir`), the team settings are the commit's
 *   (`effectiveSettings`, the function the daemon's runs and views use): `plan -c <the daemon's
 *   file>` plans what the daemon's next run applies;
 * - in a merge-request job (`CI` set, or the daemon's address given) the config is the merge
 *   request's checkout, which is data: its operator settings that could make the job run code
 *   or send anything — rulesets' custom functions, the rules' time budgets, the telemetry
 *   endpoint and headers — are never taken from it (docs/user/merge-requests.md). The job's
 *   operator settings come from the daemon's `GET /config` (plan-daemon.ts) and from the job's
 *   own flags and environment (`OTEL_*`).
 */
import type { GatesyncConfig } from "../../config/config.js";
import { effectiveSettings } from "../../run/effective-settings.js";
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import { defaultTargets } from "../../config/target-settings-view.js";

export { forMergeRequest } from "./cli-io.js";

/**
 * A merge request's checkout's config with the operator settings it may not decide taken out:
 * no custom functions (the rules calling one are skipped, each with a note), the rules' budgets
 * the defaults, no telemetry section. Its targets' settings are the caller's (commandSettings).
 */
export function untrustedCheckout(config: GatesyncConfig): GatesyncConfig {
  const { telemetry: _telemetry, rules, ...rest } = config;
  if (rules === undefined) return rest;
  const { documentTimeoutMs: _document, runTimeoutMs: _run, ...rulesets } = rules;
  return { ...rest, rules: { ...rulesets, allowCustomFunctions: false, skipCustomFunctions: true } };
}

/**
 * An environment's config for the files a command read: with the commit's team settings when
 * they are the config's own source's (no `--dir`), and never more than a merge request may
 * decide when it runs for one.
 */
export async function commandSettings(
  config: GatesyncConfig,
  files: { readonly root: string; readonly boundary?: string },
  how: { readonly fromSource: boolean; readonly mergeRequest: boolean; readonly targetsFromDaemon?: boolean },
): Promise<{ readonly config: GatesyncConfig; readonly notes: readonly Diagnostic[] }> {
  const effective = how.fromSource ? (await effectiveSettings(config, { root: files.root, boundary: files.boundary ?? files.root })).config : config;
  if (!how.mergeRequest) return { config: effective, notes: [] };
  // the targets' settings (batch route and size, app-type providers, rates): the daemon's when it gave them (plan-daemon.ts), else the defaults
  if (how.targetsFromDaemon === true) return { config: untrustedCheckout(effective), notes: [] };
  const targets = defaultTargets(effective.targets);
  const ignored = JSON.stringify(targets) !== JSON.stringify(effective.targets);
  return { config: untrustedCheckout({ ...effective, targets }), notes: ignored ? [ignoredTargets(effective)] : [] };
}

/** The note of a merge-request job with no daemon to ask: the checkout's targets' settings are not used. */
function ignoredTargets(config: GatesyncConfig): Diagnostic {
  return {
    severity: "info",
    code: ErrorCode.CONFIG_SETTING_IGNORED,
    ...(config.file === undefined ? {} : { file: "gatesync.yaml" }),
    path: "targets",
    message:
      "a merge-request job takes no operator setting from the merge request: the targets' batch route and size, app-type providers and rates of this checkout are not used; the job plans with the defaults",
    hint: "`gatesync plan` given the daemon's address (--state-url, or GATESYNC_STATE_URL) plans with the daemon's own targets' settings",
  };
}
