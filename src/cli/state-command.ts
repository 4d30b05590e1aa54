/** `gatesync state`: look at the state, move it, repair it, and resolve what only a person can decide. */
import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { UsageError } from "../errors.js";
import { openStateBackend } from "../record/open-backend.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../record/state.js";
import { declaredIds } from "./declared-ids.js";
import type { DeclaredIds } from "./declared-ids.js";
import type { CliIo } from "./plan-command.js";
import { configIfPresent } from "./plan-command.js";
import type { GatesyncConfig } from "../config/config.js";
import { envOptionHelpOne, environmentConfig } from "./environment-option.js";
import { addMoveToEnv } from "./state-move-to-env.js";
import { addStateAdoptCommand, adoptedText } from "./state-adopt-command.js";
import { migrateState } from "./state-migrate.js";
import { resolveResource } from "./state-resolve.js";
import type { ResolveOptions } from "./state-resolve.js";
import { backendFromSpec, stateSpecHelp } from "./state-spec.js";
import { pulledState, pushState } from "./state-transfer.js";

/** Runs `work` on the state the config (or `--state SPEC`) names, and closes it. */
async function withState<T>(opts: { config: string; state?: string; env?: string }, io: CliIo, work: (backend: StateBackend) => Promise<T>): Promise<T> {
  const config = async (): Promise<GatesyncConfig> => environmentConfig(opts.config, opts.env, "state");
  const backend =
    opts.state === undefined
      ? openStateBackend(await config(), io.env)
      : backendFromSpec(opts.state, opts.state === "postgres" ? await config() : undefined, io.env);
  try {
    return await work(backend);
  } finally {
    await backend.close();
  }
}

/** What a record is, for people: its status; orphaned when its resource left the repository (when known); deactivated when switched off. */
function statusText(r: ResourceRecord, declared: ReadonlySet<string> | undefined): string {
  const orphan = declared !== undefined && !declared.has(r.id);
  const status = orphan ? (r.status === "applied" ? "orphaned" : `orphaned, ${r.status}`) : r.status;
  return r.deactivatedAt === undefined ? status : `${status}, deactivated ${r.deactivatedAt}`;
}

function listText(snapshot: StateSnapshot, repository: DeclaredIds): string {
  const records = [...snapshot.resources.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const lines = [`state serial ${snapshot.serial}, ${records.length} resources`];
  if (repository.declared === undefined)
    lines.push(`(${repository.why}: records of resources gone from it are not marked orphaned; \`gatesync plan\` shows them)`);
  for (const r of records)
    lines.push(
      `${statusText(r, repository.declared).padEnd(9)} ${r.id}${r.serverId === undefined ? "" : ` (id ${r.serverId})`}${adoptedText(r)}${r.error === undefined ? "" : ` — ${r.error}`}`,
    );
  return `${lines.join("\n")}\n`;
}

function addList(state: Command, io: CliIo): void {
  state
    .command("list")
    .description("every recorded resource with its status")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--json", "as JSON")
    .option("--env <name>", envOptionHelpOne)
    .action((opts: { config: string; json?: boolean; env?: string }) =>
      withState(opts, io, async (backend) => {
        const snapshot = await backend.read();
        const repository = await declaredIds(opts.config, io, opts.env);
        const { lineage, serial, resources } = pulledState(snapshot);
        const orphans =
          repository.declared === undefined ? {} : { orphans: [...snapshot.resources.keys()].filter((id) => !repository.declared.has(id)).sort() };
        io.stdout(opts.json === true ? `${JSON.stringify({ lineage, serial, resources, ...orphans }, null, 2)}\n` : listText(snapshot, repository));
      }),
    );
}

function addMigrate(state: Command, io: CliIo): void {
  state
    .command("migrate")
    .description("copy the whole state from one backend to another, losing nothing (lineage, serial, hash key, every record)")
    .requiredOption("--from <state>", stateSpecHelp)
    .requiredOption("--to <state>", stateSpecHelp)
    .option("-c, --config <file>", "gatesync.yaml, for `postgres` (default: ./gatesync.yaml when present)")
    .option("--force", "replace a target that is not empty")
    .action(async (opts: { from: string; to: string; config?: string; force?: boolean }) => {
      const config = await configIfPresent(opts.config);
      const from = backendFromSpec(opts.from, config, io.env);
      const to = backendFromSpec(opts.to, config, io.env);
      try {
        await migrateState(from, to, opts.force === true, io);
      } finally {
        await from.close();
        await to.close();
      }
    });
}

function addPullPush(state: Command, io: CliIo): void {
  state
    .command("pull")
    .description("write the whole state as JSON (to stdout, or --out FILE); secrets in it are keyed hashes")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--state <state>", `read this state instead of the config's: ${stateSpecHelp}`)
    .option("--out <file>", "write here instead of stdout")
    .option("--env <name>", envOptionHelpOne)
    .action((opts: { config: string; state?: string; out?: string; env?: string }) =>
      withState(opts, io, async (backend) => {
        const text = `${JSON.stringify(pulledState(await backend.read()), null, 2)}\n`;
        if (opts.out === undefined) io.stdout(text);
        else
          await writeFile(opts.out, text, { mode: 0o600 }).catch((err: unknown) => {
            throw new UsageError(`cannot write ${opts.out}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
          });
      }),
    );
  state
    .command("push")
    .description("replace the state with FILE (from `state pull`); refused unless its lineage matches and nothing was written since, or with --force")
    .argument("<file>", "a file written by `gatesync state pull`")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--state <state>", `write this state instead of the config's: ${stateSpecHelp}`)
    .option("--force", "replace a state of another lineage, or one written since the pull")
    .option("--env <name>", envOptionHelpOne)
    .action((file: string, opts: { config: string; state?: string; force?: boolean; env?: string }) =>
      withState(opts, io, async (backend) => {
        const written = await pushState(backend, file, opts.force === true);
        io.stdout(`pushed ${written.resources.size} records to ${backend.description} (serial ${written.serial}, lineage ${written.lineage || "none"})\n`);
      }),
    );
}

function addResolve(state: Command, io: CliIo): void {
  state
    .command("resolve")
    .description(
      "settle a resource by hand: --id ID (an in-doubt create exists), --forget (drop the record), --accept (record the repository's spec as applied)",
    )
    .argument("<resource>", "Kind/name")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--id <id>", "the in-doubt create exists on the server with this id")
    .option("--forget", "forget the record: an in-doubt create that does not exist will be created again; an orphan stops being reported")
    .option("--accept", "record the repository's spec as applied, without calling (after a change made by hand)")
    .option("--dir <dir>", "with --accept: read the resources in this directory instead of the config's source")
    .option("--env <name>", envOptionHelpOne)
    .action(async (id: string, opts: ResolveOptions & { config: string; env?: string }) =>
      resolveResource(await environmentConfig(opts.config, opts.env, "state resolve"), id, opts, io),
    );
}

export function addStateCommand(program: Command, io: CliIo): void {
  const state = program.command("state").description("inspect, move and repair the state; resolve in-doubt resources");
  addStateAdoptCommand(state, io);
  addList(state, io);
  addMigrate(state, io);
  addPullPush(state, io);
  addResolve(state, io);
  addMoveToEnv(state, io);
}
