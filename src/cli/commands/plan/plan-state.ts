/**
 * The state `gatesync plan` computes against. A merge-request job runs in a fresh clone, where
 * the configured SQLite state does not exist: planning from it silently shows everything "to
 * create". So a plan reads, in this order:
 *
 * - `--state-url URL` (or GATESYNC_STATE_URL): the daemon's own state, fetched from its
 *   `GET /state` with the bearer token in GATESYNC_STATE_TOKEN (`server.stateTokenEnv` on the
 *   daemon). Read-only, and the job needs neither the daemon's write credentials nor a route
 *   to its database;
 * - `--state SPEC`: e.g. `postgres:VARIABLE/schema`, a connection string for a read-only role
 *   (a plan reads without a lock);
 * - the config's state — a SQLite file that does not exist is read as empty, never created.
 *
 * An empty state (never written) is always said in the plan's header; in CI (`CI` set, as
 * GitHub Actions and GitLab set it) or with `--require-state` it is an error (STATE_EMPTY)
 * unless `--allow-empty-state`: the first plan of a repository nothing was applied from.
 */
import { openOwnership } from "../../../record/ownership/open-ownership.js";
import type { OwnershipRegistry } from "../../../record/ownership/ownership.js";
import { ownershipFileBeside } from "../../../record/ownership/sqlite-ownership.js";
import { DaemonOwnership } from "./daemon-ownership.js";
import { existsSync } from "node:fs";
import type { GatesyncConfig } from "../../../config/config.js";
import { ErrorCode, StateError, UsageError } from "../../../errors.js";
import { openStateBackend, refuseOldStateBeside } from "../../../record/open-backend.js";
import { parsePulled } from "../../../record/pulled-state.js";
import { redactingState } from "../../../record/wrappers/redacting-state.js";
import { SnapshotState } from "../../../record/wrappers/snapshot-state.js";
import type { StateBackend } from "../../../record/state.js";
import { emptySnapshot } from "../../../record/state.js";
import { stateTokenVariable } from "../../../secrets/credentials.js";
import { givenStateUrl, inCi, stateUrlVariable } from "../../common/cli-io.js";

export { inCi } from "../../common/cli-io.js";
import { backendFromSpec } from "../state/state-spec.js";
import { askDaemon, daemonAddress, unreachableError } from "../../common/daemon-client.js";

export interface PlanStateFlags {
  readonly state?: string;
  readonly stateUrl?: string;
  readonly allowEmptyState?: boolean;
  readonly requireState?: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

const set = (v: string | undefined): string | undefined => (v === undefined || v === "" ? undefined : v);

/** The state to plan against (see above). */
export async function openPlanState(config: GatesyncConfig, env: Env, flags: PlanStateFlags): Promise<StateBackend> {
  const url = givenStateUrl(env, flags);
  if (url !== undefined && flags.state !== undefined) throw new UsageError("give --state or --state-url (GATESYNC_STATE_URL), not both");
  if (url !== undefined) return fetchDaemonState(url, set(env[stateTokenVariable]));
  if (flags.state !== undefined) {
    const sqlite = /^sqlite:(.+)$/.exec(flags.state)?.[1];
    if (sqlite !== undefined && !existsSync(sqlite)) return new SnapshotState(emptySnapshot(""), `sqlite ${sqlite} (does not exist)`);
    return redactingState(backendFromSpec(flags.state, config, env));
  }
  if (config.state.backend === "sqlite" && !existsSync(config.state.path)) {
    refuseOldStateBeside(config.state.path);
    // a plan never creates a state: a fresh clone has none
    return new SnapshotState(emptySnapshot(""), `sqlite ${config.state.path} (does not exist)`);
  }
  return openStateBackend(config, env);
}

/**
 * The ownership registry a plan reads (docs/user/teams.md): against the daemon (`--state-url`),
 * the daemon's rows of the environment's targets (its GET …/ownership beside the state); against
 * the config's own state, the registry beside it. None for a plan against another state
 * (`--state`) or where none was ever written (a plan never creates one).
 */
export function openPlanOwnership(config: GatesyncConfig, env: Env, flags: PlanStateFlags): OwnershipRegistry | undefined {
  const url = givenStateUrl(env, flags);
  if (url !== undefined && flags.state === undefined)
    return new DaemonOwnership(url, (at) => readFromDaemon(at, set(env[stateTokenVariable]), "ownership registry"));
  if (url !== undefined || flags.state !== undefined) return undefined;
  if (config.state.backend === "sqlite" && !existsSync(ownershipFileBeside(config.state.path))) return undefined;
  return openOwnership(config, env);
}

/**
 * Refuses an empty state where one is required, unless --allow-empty-state: a plan in CI or with
 * --require-state; an apply always (its caller asks only when the plan would create anything:
 * applying from an empty state creates again what the state it did not read holds).
 */
export function checkStateRequired(serial: number, description: string, env: Env, flags: PlanStateFlags, command: "plan" | "apply" = "plan"): void {
  if (serial > 0 || flags.allowEmptyState === true) return;
  const ci = inCi(env);
  if (command === "plan" && !ci && flags.requireState !== true) return;
  throw new StateError(
    ErrorCode.STATE_EMPTY,
    `the state this ${command} would be computed against is empty (${description})${ci ? " and this runs in CI (CI is set)" : ""}: every resource would show as a create`,
    { hint: `${command === "plan" ? planAgainstHint : applyWithHint}; if nothing was ever applied from this repository, pass --allow-empty-state` },
  );
}

const planAgainstHint = `plan against the daemon's state: set ${stateUrlVariable} to the daemon's address and ${stateTokenVariable} to its server.stateTokenEnv token (or pass --state postgres:VARIABLE/schema)`;
const applyWithHint =
  "apply with the state the earlier applies wrote: point gatesync.yaml's `state` at it (its SQLite `path`, or `backend: postgres`), or let the daemon apply (POST /sync)";

/** The daemon's state from its `GET /state` (or an environment's, `/environments/NAME/state`). */
async function fetchDaemonState(base: string, token: string | undefined): Promise<StateBackend> {
  const url = daemonAddress(base.replace(/\/+$/, "").endsWith("/state") ? base : `${base.replace(/\/+$/, "")}/state`, "--state-url");
  const where = `${url.origin}${url.pathname}`;
  return new SnapshotState(parsePulled(await readFromDaemon(url, token, "state"), where), `the daemon's state at ${where}`);
}

/**
 * What a plan may read of the daemon: its state as large as one string may be (the state grows
 * with the repository: no smaller bound would hold for every team), its settings some kilobytes.
 */
const maxAnswerBytes = { state: 500 * 1024 * 1024, "operator settings": 4 * 1024 * 1024, "ownership registry": 100 * 1024 * 1024 } as const;

/** What a plan reads of the daemon. */
export type DaemonAnswer = keyof typeof maxAnswerBytes;

const notServedHint: Readonly<Record<DaemonAnswer, string>> = {
  state: "set server.stateTokenEnv in the daemon's gatesync.yaml and the variable it names, then restart it",
  "operator settings": "set server.stateTokenEnv in the daemon's gatesync.yaml, and run a gatesync that serves GET /config",
  "ownership registry":
    "run a gatesync daemon that serves its environments' ownership registry (GET /environments/NAME/ownership): the version of this gatesync",
};

/**
 * The body of one of the daemon's read-only answers (`/state`, `/config`), read with the state
 * token (daemon-client.ts); STATE_UNREACHABLE says why not — never replaced by anything local.
 */
export async function readFromDaemon(url: URL, token: string | undefined, what: DaemonAnswer): Promise<string> {
  if (token === undefined)
    throw new UsageError(
      `${stateTokenVariable} is not set: the daemon's ${what} are read with it`,
      `set it to the value of the daemon's server.stateTokenEnv variable`,
    );
  const where = `${url.origin}${url.pathname}`;
  const unreachable = (why: string, hint: string): StateError => unreachableError(`cannot read the daemon's ${what} from ${where}`, why, hint);
  const res = await askDaemon(url, {
    token,
    timeoutMs: 60_000,
    maxBytes: maxAnswerBytes[what],
    unreachable: (why) => unreachable(why, "check the address and that the CI runner can reach the daemon's server (server.listen)"),
  });
  if (res.status === 401)
    throw unreachable("the token was refused (401)", `set ${stateTokenVariable} to the value of the daemon's server.stateTokenEnv variable`);
  if (res.status === 404) throw unreachable(`the daemon does not serve its ${what} (404)`, notServedHint[what]);
  if (res.status !== 200) throw unreachable(`it answered ${res.status}`, "see the daemon's log");
  return res.text;
}
