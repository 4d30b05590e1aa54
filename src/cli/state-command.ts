/** `gatesync state`: look at the state, and resolve what only a person can decide. */
import { hostname } from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { ErrorCode, StateError, UsageError } from "../errors.js";
import { unfilledParams } from "../plan/plan.js";
import { runPlan } from "../plan/run-plan.js";
import type { PlanRun } from "../plan/run-plan.js";
import type { GatesyncConfig } from "../config/config.js";
import { serverIdAddress } from "../kinds/registry.js";
import { FileStateBackend } from "../record/file-backend.js";
import { openStateBackend } from "../record/open-backend.js";
import { PostgresStateBackend } from "../record/postgres-backend.js";
import { appliedRecord } from "../record/record.js";
import type { ResourceRecord, StateBackend } from "../record/state.js";
import { RepositoryValidator } from "../validate/validate-repository.js";
import type { CliIo } from "./plan-command.js";
import { configOrDefault } from "./plan-command.js";
import { addStateAdoptCommand, adoptedText } from "./state-adopt-command.js";
import { openResources } from "./resources.js";

/**
 * A backend named on the command line: `file:PATH`, `postgres` (the config's postgres state),
 * or `postgres:VARIABLE[/schema]` (a connection string held in an environment variable, so
 * that no password appears in the command line).
 */
export function backendFromSpec(spec: string, config: GatesyncConfig | undefined, env: Readonly<Record<string, string | undefined>>): StateBackend {
  if (spec.startsWith("file:") && spec.length > 5) return new FileStateBackend(path.resolve(spec.slice(5)));
  if (spec === "postgres") {
    if (config?.state.backend !== "postgres") throw new UsageError("`postgres` names the config's postgres state, but the config's state is not postgres", "use postgres:VARIABLE[/schema], with the connection string in VARIABLE");
    return openStateBackend(config, env);
  }
  const m = /^postgres:([A-Za-z_][A-Za-z0-9_]*)(?:\/([a-z_][a-z0-9_]*))?$/.exec(spec);
  if (m !== null) {
    const url = env[m[1]!];
    if (url === undefined || url === "") throw new UsageError(`${m[1]} is not set`, "set it to the PostgreSQL connection string");
    return new PostgresStateBackend({ url, schema: m[2] ?? "gatesync" });
  }
  throw new UsageError(`unknown state ${JSON.stringify(spec)}`, "use file:PATH, postgres, or postgres:VARIABLE[/schema]");
}

export function addStateCommand(program: Command, io: CliIo): void {
  const state = program.command("state").description("inspect the state and resolve in-doubt resources");
  addStateAdoptCommand(state, io);

  state
    .command("list")
    .description("every recorded resource with its status")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--json", "as JSON")
    .action(async (opts: { config: string; json?: boolean }) => {
      const backend = openStateBackend(await configOrDefault(opts.config), io.env);
      try {
        const snapshot = await backend.read();
        const records = [...snapshot.resources.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
        if (opts.json === true) {
          io.stdout(`${JSON.stringify({ lineage: snapshot.lineage, serial: snapshot.serial, resources: records }, null, 2)}\n`);
          return;
        }
        io.stdout(`state serial ${snapshot.serial}, ${records.length} resources\n`);
        for (const r of records) io.stdout(`${r.status.padEnd(9)} ${r.id}${r.serverId === undefined ? "" : ` (id ${r.serverId})`}${adoptedText(r)}${r.error === undefined ? "" : ` — ${r.error}`}\n`);
      } finally {
        await backend.close();
      }
    });

  state
    .command("migrate")
    .description("copy the whole state from one backend to another, losing nothing (lineage, serial, hash key, every record)")
    .requiredOption("--from <state>", "file:PATH, postgres (the config's), or postgres:VARIABLE[/schema]")
    .requiredOption("--to <state>", "file:PATH, postgres (the config's), or postgres:VARIABLE[/schema]")
    .option("-c, --config <file>", "gatesync.yaml (for `postgres`)")
    .option("--force", "replace a target that is not empty")
    .action(async (opts: { from: string; to: string; config?: string; force?: boolean }) => {
      const config = opts.config === undefined ? undefined : await configOrDefault(opts.config);
      const from = backendFromSpec(opts.from, config, io.env);
      const to = backendFromSpec(opts.to, config, io.env);
      const owner = `gatesync state migrate (pid ${process.pid} on ${hostname()})`;
      try {
        // a source that was never written (a mistyped path reads as empty): nothing to copy, and
        // copying it would only empty a target; checked before locking, which creates directories
        const source = await from.read();
        if (source.serial === 0 && source.resources.size === 0) {
          throw new StateError(ErrorCode.USAGE, `the source state (${from.description}) is empty: there is nothing to migrate`, {
            hint: "check --from: a file state exists only once something was applied, so a wrong path reads as an empty state",
          });
        }
        // both locked: nobody writes to either while the copy is made
        const fromLock = await from.lock(owner);
        try {
          const snapshot = await from.read();
          const toLock = await to.lock(owner);
          try {
            const existing = await to.read();
            if (existing.serial > 0 && opts.force !== true) {
              throw new StateError(ErrorCode.USAGE, `the target (${to.description}) is not empty: serial ${existing.serial}, ${existing.resources.size} records`, { hint: "pass --force to replace it" });
            }
            await to.replaceAll(snapshot);
          } finally {
            await toLock.release();
          }
          const copied = await to.read();
          if (copied.serial !== snapshot.serial || copied.resources.size !== snapshot.resources.size || copied.lineage !== snapshot.lineage) {
            throw new StateError(ErrorCode.STATE_IO, "the copy does not match the source", { hint: "the target may have been written meanwhile; run the migration again" });
          }
          io.stdout(`migrated ${snapshot.resources.size} records (serial ${snapshot.serial}, lineage ${snapshot.lineage === "" ? "none" : snapshot.lineage}) from ${from.description} to ${to.description}\n`);
        } finally {
          await fromLock.release();
        }
      } finally {
        await from.close();
        await to.close();
      }
    });

  state
    .command("resolve")
    .description("settle a resource by hand: --id ID (an in-doubt create exists), --forget (drop the record), --accept (record the repository's spec as applied)")
    .argument("<resource>", "Kind/name")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--id <id>", "the in-doubt create exists on the server with this id")
    .option("--forget", "forget the record: an in-doubt create that does not exist will be created again; an orphan stops being reported")
    .option("--accept", "record the repository's spec as applied, without calling (after a change made by hand)")
    .option("--dir <dir>", "with --accept: read the resources in this directory instead of the config's source")
    .action(async (id: string, opts: { config: string; id?: string; forget?: boolean; accept?: boolean; dir?: string }) => {
      const chosen = [opts.id !== undefined, opts.forget === true, opts.accept === true].filter(Boolean).length;
      if (chosen !== 1) throw new UsageError("give exactly one of --id, --forget or --accept");
      const config = await configOrDefault(opts.config);
      const backend = openStateBackend(config, io.env);
      const lock = await backend.lock(`gatesync state resolve (pid ${process.pid} on ${hostname()})`);
      try {
        const snapshot = await backend.read();
        const record = snapshot.resources.get(id);
        const now = new Date().toISOString();
        if (opts.forget === true) {
          if (record === undefined) throw new StateError(ErrorCode.USAGE, `${id} is not in the state`, { hint: "`gatesync state list` shows what is" });
          await backend.remove(id);
          io.stdout(`forgot ${id}\n`);
          return;
        }
        if (opts.id !== undefined) {
          if (record?.status !== "in-doubt") throw new StateError(ErrorCode.USAGE, `${id} is not in doubt`, { hint: "--id settles an in-doubt create; use --accept for other resources" });
          const { error: _e, attempted, ...rest } = record;
          const resolved: ResourceRecord = {
            ...rest,
            status: "applied",
            serverId: opts.id,
            address: { ...record.address, ...serverIdAddress(record.kind, opts.id) },
            ...(attempted === undefined ? {} : { applied: attempted }),
            updatedAt: now,
          };
          await backend.write(resolved);
          io.stdout(`recorded ${id} as applied, server id ${opts.id}\n`);
          return;
        }
        const resources = await openResources(config, io.env, opts.dir);
        let run: PlanRun;
        try {
          run = await runPlan({ config, ...resources.input, validator: new RepositoryValidator(), state: backend, env: io.env });
        } finally {
          await resources.close();
        }
        const d = run.desired.desired.find((x) => x.id === id);
        if (d === undefined) throw new StateError(ErrorCode.USAGE, `${id} is not in the repository`, { hint: "--accept records the repository's spec; use --forget for a resource that left it" });
        const missing = d.request.update === undefined ? [] : unfilledParams(d.request.update, { ...d.request.address, ...record?.address });
        if (missing.length > 0) {
          throw new StateError(ErrorCode.USAGE, `cannot accept ${id}: its ${missing.map((m) => `\`${m}\``).join(", ")} is unknown, so no later update could address the object`, {
            hint: record?.status === "in-doubt" ? `record its server id with \`gatesync state resolve ${id} --id <server id>\`` : "write the server id in the spec (e.g. spec.webhookId) and accept again",
          });
        }
        const accepted = appliedRecord(d, record, { now, quotaReset: true });
        await backend.write({ ...accepted, applied: d.request.compare, appliedHash: d.hash });
        io.stdout(`recorded ${id} as applied from the repository's spec, without calling the server\n`);
      } finally {
        await lock.release();
      }
    });
}
