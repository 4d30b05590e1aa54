/**
 * `gatesync validate` and the ownership registry (docs/user/teams.md): a resource whose object
 * another owner holds is a located OWNED_ELSEWHERE error naming the owner and its environment —
 * the daemon's run refuses every write of it. The registry read is the daemon's (a state URL:
 * its GET /config names each environment's owner and targets, its …/ownership the rows), else
 * the one beside the config's own state where it exists (a SQLite `ownership.db`; PostgreSQL
 * when its variable is set). Validation reads no state: LLM settings, known by a keyed hash of
 * their content, are checked from `plan` on.
 */
import { existsSync } from "node:fs";
import type { GatesyncConfig } from "../../../config/config.js";
import { claimantOf } from "../../../config/environments.js";
import { ErrorCode, GatesyncError } from "../../../errors.js";
import type { Diagnostic } from "../../../errors.js";
import type { Resource } from "../../../kinds/resource.js";
import { desiredKey, isElsewhere, ownedHint, ownedText } from "../../../plan/ownership-check.js";
import { prepareDesired } from "../../../plan/prepare-desired.js";
import { openOwnership } from "../../../record/ownership/open-ownership.js";
import { keyOf } from "../../../record/ownership/ownership.js";
import type { OwnershipRegistry } from "../../../record/ownership/ownership.js";
import { ownershipFileBeside } from "../../../record/ownership/sqlite-ownership.js";
import { emptySnapshot } from "../../../record/state.js";
import { ownershipTargets } from "../../../run/ownership-stages.js";
import { SecretResolver } from "../../../secrets/resolver.js";
import { stateTokenVariable } from "../../../secrets/credentials.js";
import { runSecretSource } from "../../../source/secret-roots.js";
import { inRepository, repositoryPrefix } from "../../../source/repository-path.js";
import { givenStateUrl } from "../../common/cli-io.js";
import { daemonEnvironments, daemonSettings } from "../plan/daemon-plan.js";
import { DaemonOwnership } from "../plan/daemon-ownership.js";
import { readFromDaemon } from "../plan/plan-state.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Where an environment's registry is read, and the config (owner, targets) it is checked as. */
export interface OwnershipSource {
  readonly config: GatesyncConfig;
  readonly registry: OwnershipRegistry;
}

/** Each environment's registry, by its name: the daemon's (with a state URL), else the config's own, where one exists. */
export type OwnershipSources = (name: string, config: GatesyncConfig) => OwnershipSource | undefined;

/** The registry beside the config's own state, where one was ever written and can be reached. */
function ownRegistry(config: GatesyncConfig, env: Env): OwnershipRegistry | undefined {
  if (config.state.backend === "sqlite") return existsSync(ownershipFileBeside(config.state.path)) ? openOwnership(config, env) : undefined;
  return env[config.state.urlEnv] === undefined || env[config.state.urlEnv] === "" ? undefined : openOwnership(config, env);
}

/**
 * A registry that cannot be read (an unreachable daemon, a refused token) is a warning: the
 * rest of the repository is validated, and `plan` fails on it (STATE_UNREACHABLE).
 */
function notChecked(err: unknown): Diagnostic {
  if (!(err instanceof GatesyncError)) throw err;
  return {
    severity: "warning",
    code: err.code,
    message: `the ownership registry was not read, so objects other teams own were not checked: ${err.message}`,
    ...(err.hint === undefined ? {} : { hint: err.hint }),
  };
}

/** The registries validate reads (see above), or why none could be: `top` the checkout's config, `flags.env` its --env. */
export async function ownershipSources(
  top: GatesyncConfig,
  env: Env,
  flags: { stateUrl?: string; env?: string },
): Promise<OwnershipCheck & { readonly notes: Diagnostic[] }> {
  try {
    return { of: await sourcesOf(top, env, flags), findings: ownershipFindings, notes: [] };
  } catch (err) {
    return { of: () => undefined, findings: ownershipFindings, notes: [notChecked(err)] };
  }
}

/** The registries and the check against them, together: validate loads this module once, and only with a config. */
export interface OwnershipCheck {
  readonly of: OwnershipSources;
  readonly findings: typeof ownershipFindings;
}

async function sourcesOf(top: GatesyncConfig, env: Env, flags: { stateUrl?: string; env?: string }): Promise<OwnershipSources> {
  const url = givenStateUrl(env, flags);
  if (url === undefined) return (_name, config) => ((r) => (r === undefined ? undefined : { config, registry: r }))(ownRegistry(config, env));
  const token = env[stateTokenVariable] === "" ? undefined : env[stateTokenVariable];
  const daemon = daemonEnvironments(top, await daemonSettings(url, token), flags.env);
  const byName = new Map(daemon.environments.map((d) => [d.environment.name, d]));
  return (name) => {
    const d = byName.get(name);
    if (d === undefined) return undefined;
    return { config: d.environment.config, registry: new DaemonOwnership(d.stateUrl, (at) => readFromDaemon(at, token, "ownership registry")) };
  };
}

/** The OWNED_ELSEWHERE errors of an environment's resources, at their files (named from the repository's root). */
export async function ownershipFindings(
  resources: readonly Resource[],
  source: OwnershipSource,
  env: Env,
  at: { readonly root: string; readonly boundary?: string },
): Promise<Diagnostic[]> {
  const { config, registry } = source;
  try {
    const targets = ownershipTargets(config);
    const read = await registry.rowsOf(Object.entries(targets).map(([i, url]) => ({ interface: i, url }))).catch((err: unknown) => notChecked(err));
    if (!Array.isArray(read)) return [read];
    const rows = read;
    if (rows.length === 0) return [];
    const byKey = new Map(rows.map((r) => [keyOf(r), r]));
    const claimant = claimantOf(config);
    const secrets = new SecretResolver(runSecretSource(config, env, at, { withoutIdentity: "placeholder" }));
    // the objects' identities only: a resource that cannot be prepared was reported by validation
    const desired = prepareDesired(resources, {
      secrets,
      hashKey: "validate",
      appTypeProviders: new Set(config.targets.portal?.appTypeProviders ?? []),
      state: emptySnapshot(""),
    });
    const found: Diagnostic[] = [];
    for (const d of desired.desired) {
      const key = desiredKey(d, targets);
      const row = key === undefined ? undefined : byKey.get(keyOf(key));
      if (row === undefined || !isElsewhere(row, claimant)) continue;
      found.push({
        severity: "error",
        code: ErrorCode.OWNED_ELSEWHERE,
        file: d.source.file,
        line: d.source.line,
        column: 1,
        message: ownedText(d.id, row),
        hint: ownedHint(row),
      });
    }
    return inRepository(found, repositoryPrefix(at.root, at.boundary));
  } finally {
    await registry.close();
  }
}
