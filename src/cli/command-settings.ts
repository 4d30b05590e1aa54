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
import type { GatesyncConfig } from "../config/config.js";
import { effectiveSettings } from "../plan/effective-settings.js";

export { forMergeRequest } from "./cli-io.js";

/**
 * A merge request's checkout's config with the operator settings it may not decide taken out:
 * no custom functions (the rules calling one are skipped, each with a note), the rules' budgets
 * the defaults, no telemetry section.
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
  how: { readonly fromSource: boolean; readonly mergeRequest: boolean },
): Promise<GatesyncConfig> {
  const effective = how.fromSource ? (await effectiveSettings(config, { root: files.root, boundary: files.boundary ?? files.root })).config : config;
  return how.mergeRequest ? untrustedCheckout(effective) : effective;
}
