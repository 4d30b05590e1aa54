/** `gatesync state`: look at the state, move it, repair it, and resolve what only a person can decide. */
import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { envOptionHelpOne, stateSpecHelp } from "../../common/cli-io.js";
import { addMoveToEnv } from "./move-to-env/command.js";
import { addStateAdoptCommand } from "./adopt/command.js";
import type { ResolveOptions } from "./resolve.js";
import type * as StateActionsModule from "./actions.js";
import { examplesText } from "../../common/help-examples.js";

type StateActions = typeof StateActionsModule;

/** The actions, loaded when one runs (actions.ts). */
const actions = async (): Promise<StateActions> => import("./actions.js");

function addList(state: Command, io: CliIo): void {
  state
    .command("list")
    .addHelpText("after", examplesText("state list"))
    .description("every recorded resource with its status")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--json", "as JSON")
    .option("--env <name>", envOptionHelpOne)
    .action(async (opts: { config: string; json?: boolean; env?: string }) => (await actions()).listAction(opts, io));
}

function addMigrate(state: Command, io: CliIo): void {
  state
    .command("migrate")
    .addHelpText("after", examplesText("state migrate"))
    .description("copy the whole state from one backend to another, losing nothing (lineage, serial, hash key, every record)")
    .requiredOption("--from <state>", stateSpecHelp)
    .requiredOption("--to <state>", stateSpecHelp)
    .option("-c, --config <file>", "gatesync.yaml, for `postgres` (default: ./gatesync.yaml when present)")
    .option("--force", "replace a target that is not empty")
    .action(async (opts: { from: string; to: string; config?: string; force?: boolean }) => (await actions()).migrateAction(opts, io));
}

function addPullPush(state: Command, io: CliIo): void {
  state
    .command("pull")
    .addHelpText("after", examplesText("state pull"))
    .description("write the whole state as JSON (to stdout, or --out FILE); secrets in it are keyed hashes")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--state <state>", `read this state instead of the config's: ${stateSpecHelp}`)
    .option("--out <file>", "write here instead of stdout")
    .option("--env <name>", envOptionHelpOne)
    .action(async (opts: { config: string; state?: string; out?: string; env?: string }) => (await actions()).pullAction(opts, io));
  state
    .command("push")
    .addHelpText("after", examplesText("state push"))
    .description("replace the state with FILE (from `state pull`); refused unless its lineage matches and nothing was written since, or with --force")
    .argument("<file>", "a file written by `gatesync state pull`")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--state <state>", `write this state instead of the config's: ${stateSpecHelp}`)
    .option("--force", "replace a state of another lineage, or one written since the pull")
    .option("--env <name>", envOptionHelpOne)
    .action(async (file: string, opts: { config: string; state?: string; force?: boolean; env?: string }) => (await actions()).pushAction(file, opts, io));
}

function addResolve(state: Command, io: CliIo): void {
  state
    .command("resolve")
    .addHelpText("after", examplesText("state resolve"))
    .description(
      "settle a resource by hand: --id ID (an in-doubt create exists), --forget (drop the records; several, or --all-orphans), --accept (record the repository's spec as applied)",
    )
    .argument("[resources...]", "Kind/name (several with --forget)")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--id <id>", "the in-doubt create exists on the server with this id")
    .option("--forget", "forget the records: an in-doubt create that does not exist will be created again; an orphan stops being reported")
    .option("--all-orphans", "with --forget (implied): every record whose resource left the repository; asks first")
    .option("--yes", "with --all-orphans: do not ask (needed off a terminal)")
    .option("--accept", "record the repository's spec as applied, without calling (after a change made by hand)")
    .option("--dir <dir>", "with --accept or --all-orphans: read the resources in this directory instead of the config's source")
    .option("--env <name>", envOptionHelpOne)
    .action(async (ids: string[], opts: ResolveOptions & { config: string; env?: string }) => (await actions()).resolveAction(ids, opts, io));
}

export function addStateCommand(program: Command, io: CliIo): void {
  const state = program
    .command("state")
    .description("inspect, move and repair the state; resolve in-doubt resources")
    .addHelpText("after", examplesText("state"));
  addStateAdoptCommand(state, io);
  addList(state, io);
  addMigrate(state, io);
  addPullPush(state, io);
  addResolve(state, io);
  addMoveToEnv(state, io);
}
