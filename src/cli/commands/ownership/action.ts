/**
 * The actions of `gatesync ownership` (command.ts declares them), loaded when they run. The
 * registry is the one beside the `--env` environment's state (record/ownership/open-ownership.ts);
 * a release or transfer is one registry write and one row of that environment's history.
 */
import { ErrorCode, GatesyncError, UsageError } from "../../../errors.js";
import type { GatesyncConfig } from "../../../config/config.js";
import { environmentsOf } from "../../../config/environments.js";
import { interfaceNames } from "../../../contract/interfaces.js";
import type { InterfaceName } from "../../../contract/interfaces.js";
import { openStateBackend } from "../../../record/open-backend.js";
import { openOwnership } from "../../../record/ownership/open-ownership.js";
import { isOwnerName, keyOf, registryUrl } from "../../../record/ownership/ownership.js";
import type { OwnershipKey, OwnershipRow } from "../../../record/ownership/ownership.js";
import type { OwnershipRecord } from "../../../record/history/ownership-history.js";
import { boundText, stripControls } from "../../../text/bounded-text.js";
import type { CliIo } from "../../common/cli-io.js";
import { environmentConfig } from "../../common/environment-option.js";
import { loadConfig } from "../../../config/config.js";

export interface OwnershipOptions {
  readonly config: string;
  readonly env?: string;
  readonly format?: "text" | "json";
  readonly interface?: string;
  readonly to?: string;
  readonly toEnvironment?: string;
  readonly reason?: string;
}

/** Every target any environment of the config names (a row of another target: no run of it reads it). */
function knownTargets(top: GatesyncConfig): Set<string> {
  const known = new Set<string>();
  for (const e of environmentsOf(top))
    for (const name of interfaceNames()) {
      const url = e.config.targets[name]?.url;
      if (url !== undefined) known.add(`${name} ${registryUrl(url)}`);
    }
  return known;
}

const rowLine = (r: OwnershipRow, known: boolean): string =>
  stripControls(
    `${r.object}  ${r.interface} ${r.url}  owner ${r.owner} (environment ${r.environment})  claimed by ${r.resource} at ${r.claimedAt}${known ? "" : "  (a target no environment of this config names: ignored by its runs)"}`,
  );

export async function listAction(opts: OwnershipOptions, io: CliIo): Promise<void> {
  const top = await loadConfig(opts.config);
  const config = await environmentConfig(opts.config, opts.env, "ownership list");
  const registry = openOwnership(config, io.env);
  try {
    const rows = await registry.all();
    const known = knownTargets(top);
    if (opts.format === "json") {
      io.stdout(
        `${JSON.stringify(
          rows.map((r) => ({ ...r, knownTarget: known.has(`${r.interface} ${r.url}`) })),
          null,
          2,
        )}\n`,
      );
      return;
    }
    if (rows.length === 0) io.stdout(`no object has an owner yet (${registry.description})\n`);
    for (const r of rows) io.stdout(`${rowLine(r, known.has(`${r.interface} ${r.url}`))}\n`);
  } finally {
    await registry.close();
  }
}

/** The object on the `--env` environment's target of `--interface`. */
function keyFor(object: string, opts: OwnershipOptions, config: GatesyncConfig): OwnershipKey {
  const name = opts.interface as InterfaceName;
  if (!interfaceNames().includes(name)) throw new UsageError(`--interface ${JSON.stringify(opts.interface)} is not one of ${interfaceNames().join(", ")}`);
  const url = config.targets[name]?.url;
  if (url === undefined)
    throw new UsageError(`the environment has no ${name} target: the object's URL is unknown`, { hint: "pass the --env whose targets hold it" });
  if (object.trim() === "" || object.length > 1000) throw new UsageError("name the object as `gatesync ownership list` prints it");
  return { interface: name, url: registryUrl(url), object };
}

const notOwned = (key: OwnershipKey): GatesyncError =>
  new GatesyncError(ErrorCode.USAGE, `${key.object} on ${key.interface} ${key.url} has no owner in the registry`, {
    hint: "`gatesync ownership list` shows the objects that have one (an unowned object is claimed by the first apply that declares it)",
  });

async function audited(config: GatesyncConfig, io: CliIo, record: Omit<OwnershipRecord, "kind" | "startedAt" | "finishedAt">): Promise<void> {
  const state = openStateBackend(config, io.env);
  const now = new Date().toISOString();
  try {
    await state.appendHistory({ record: { kind: "ownership", startedAt: now, finishedAt: now, ...record } }, config.history);
  } finally {
    await state.close();
  }
}

export async function releaseAction(object: string, opts: OwnershipOptions, io: CliIo): Promise<void> {
  const config = await environmentConfig(opts.config, opts.env, "ownership release");
  const key = keyFor(object, opts, config);
  const registry = openOwnership(config, io.env);
  try {
    const before = await registry.release(key);
    if (before === undefined) throw notOwned(key);
    const reason = boundText(stripControls(opts.reason ?? ""), 500);
    await audited(config, io, { act: "release", ...key, from: { owner: before.owner, environment: before.environment }, reason });
    io.stdout(`${stripControls(keyOf(key))}: released by team ${before.owner}; the next owner whose apply declares it claims it\n`);
  } finally {
    await registry.close();
  }
}

export async function transferAction(object: string, opts: OwnershipOptions, io: CliIo): Promise<void> {
  const config = await environmentConfig(opts.config, opts.env, "ownership transfer");
  const key = keyFor(object, opts, config);
  const to = { owner: opts.to ?? "", environment: opts.toEnvironment ?? "" };
  if (!isOwnerName(to.owner) || !isOwnerName(to.environment))
    throw new UsageError(`--to and --to-environment must be short names (a-z, 0-9, . _ -): ${JSON.stringify(to.owner.slice(0, 80))}`);
  const registry = openOwnership(config, io.env);
  try {
    const before = await registry.transfer(key, to, new Date().toISOString());
    if (before === undefined) throw notOwned(key);
    const reason = boundText(stripControls(opts.reason ?? ""), 500);
    await audited(config, io, { act: "transfer", ...key, from: { owner: before.owner, environment: before.environment }, to, reason });
    io.stdout(
      `${stripControls(keyOf(key))}: moved from team ${before.owner} (environment ${before.environment}) to team ${to.owner} (environment ${to.environment}); nothing was sent — ${to.owner}'s next apply manages it\n`,
    );
  } finally {
    await registry.close();
  }
}
