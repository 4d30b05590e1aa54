/** The actions of `gatesync state …`, loaded when one of them runs (state-command.ts declares them). */
import { writeFile } from "node:fs/promises";
import { UsageError } from "../../../errors.js";
import { openStateBackend } from "../../../record/open-backend.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../../../record/state.js";
import type { CliIo } from "../../common/cli-io.js";
import { configIfPresent } from "../../common/cli-io.js";
import type { GatesyncConfig } from "../../../config/config.js";
import { environmentConfig } from "../../common/environment-option.js";
import { declaredIds } from "./declared-ids.js";
import type { DeclaredIds } from "./declared-ids.js";
import { adoptedText } from "./adopt/action.js";
import { migrateState } from "./migrate.js";
import { resolveResources } from "./resolve.js";
import type { ResolveOptions } from "./resolve.js";
import { backendFromSpec } from "./state-spec.js";
import { pulledState, pushState } from "./transfer.js";

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

/** `state list`. */
export async function listAction(opts: { config: string; json?: boolean; env?: string }, io: CliIo): Promise<void> {
  await withState(opts, io, async (backend) => {
    const snapshot = await backend.read();
    const repository = await declaredIds(opts.config, io, opts.env);
    const { lineage, serial, resources } = pulledState(snapshot);
    const orphans = repository.declared === undefined ? {} : { orphans: [...snapshot.resources.keys()].filter((id) => !repository.declared.has(id)).sort() };
    io.stdout(opts.json === true ? `${JSON.stringify({ lineage, serial, resources, ...orphans }, null, 2)}\n` : listText(snapshot, repository));
  });
}

/** `state migrate`. */
export async function migrateAction(opts: { from: string; to: string; config?: string; force?: boolean }, io: CliIo): Promise<void> {
  const config = await configIfPresent(opts.config);
  const from = backendFromSpec(opts.from, config, io.env);
  const to = backendFromSpec(opts.to, config, io.env);
  try {
    await migrateState(from, to, opts.force === true, io);
  } finally {
    await from.close();
    await to.close();
  }
}

/** `state pull`. */
export async function pullAction(opts: { config: string; state?: string; out?: string; env?: string }, io: CliIo): Promise<void> {
  await withState(opts, io, async (backend) => {
    const text = `${JSON.stringify(pulledState(await backend.read()), null, 2)}\n`;
    if (opts.out === undefined) io.stdout(text);
    else
      await writeFile(opts.out, text, { mode: 0o600 }).catch((err: unknown) => {
        throw new UsageError(`cannot write ${opts.out}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      });
  });
}

/** `state push`. */
export async function pushAction(file: string, opts: { config: string; state?: string; force?: boolean; env?: string }, io: CliIo): Promise<void> {
  await withState(opts, io, async (backend) => {
    const written = await pushState(backend, file, opts.force === true);
    io.stdout(`pushed ${written.resources.size} records to ${backend.description} (serial ${written.serial}, lineage ${written.lineage || "none"})\n`);
  });
}

/** `state resolve`. */
export async function resolveAction(ids: readonly string[], opts: ResolveOptions & { config: string; env?: string }, io: CliIo): Promise<void> {
  await resolveResources(await environmentConfig(opts.config, opts.env, "state resolve"), ids, opts, io);
}
