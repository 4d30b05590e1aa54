/** `gatesync state resolve`: settles a resource by hand (an in-doubt create, a forgotten one, a change made by hand). */
import type { GatesyncConfig } from "../../../config/config.js";
import { UsageError } from "../../../errors.js";
import { knownKind, serverIdAddress } from "../../../kinds/registry.js";
import { inDoubtHint } from "../../../plan/in-doubt.js";
import { unfilledParams } from "../../../plan/plan-change.js";
import { runPlan } from "../../../run/run-plan.js";
import type { PlanRun } from "../../../run/run-plan.js";
import { openStateBackend } from "../../../record/open-backend.js";
import { appliedRecord } from "../../../apply/records/applied-record.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../../../record/state.js";
import { formerHolders, withoutFormer } from "../../../record/lineage/rename-lineage.js";
import { RepositoryValidator } from "../../../validate/repository/repository-validator.js";
import type { CliIo } from "../../common/cli-io.js";
import { openResources } from "../../common/resources.js";
import { heldPayload } from "../../../record/wrappers/lazy-record.js";
import { invocationOf, withInvocation } from "../../../printed-commands.js";
import { ask } from "../../common/ask.js";
import { declaredIdsOf } from "./declared-ids.js";

export interface ResolveOptions {
  readonly id?: string;
  readonly forget?: boolean;
  readonly accept?: boolean;
  readonly dir?: string;
  readonly allOrphans?: boolean;
  readonly yes?: boolean;
}

/** The in-doubt create exists on the server with `serverId`. */
function resolvedRecord(record: ResourceRecord, serverId: string): ResourceRecord {
  const { error: _e, attempted, ...rest } = record;
  return {
    ...rest,
    status: "applied",
    serverId,
    address: { ...record.address, ...serverIdAddress(record.kind, serverId) },
    ...(attempted === undefined ? {} : { applied: attempted }),
    updatedAt: new Date().toISOString(),
  };
}

/** The repository's spec of `id`, recorded as applied without calling. */
async function accept(
  config: GatesyncConfig,
  backend: StateBackend,
  id: string,
  record: ResourceRecord | undefined,
  dir: string | undefined,
  io: CliIo,
): Promise<void> {
  const resources = await openResources(config, io.env, dir);
  let run: PlanRun;
  try {
    run = await runPlan({ config, ...resources.input, validator: RepositoryValidator.oneShot(), state: backend, env: io.env });
  } finally {
    await resources.close();
  }
  const d = run.desired.desired.find((x) => x.id === id);
  if (d === undefined)
    throw new UsageError(`${id} is not in the repository`, { hint: "--accept records the repository's spec; use --forget for a resource that left it" });
  const missing = d.request.update === undefined ? [] : unfilledParams(d.request.update, { ...d.request.address, ...record?.address });
  if (missing.length > 0) {
    throw new UsageError(`cannot accept ${id}: its ${missing.map((m) => `\`${m}\``).join(", ")} is unknown, so no later update could address the object`, {
      hint:
        record?.status === "in-doubt"
          ? withInvocation(`record its server id with \`gatesync state resolve ${id} --id <server id>\``, invocationOf(config))
          : "write the server id in the spec (e.g. spec.webhookId) and accept again",
    });
  }
  const accepted = appliedRecord(d, record, { now: new Date().toISOString(), quotaReset: true });
  await backend.write({ ...accepted, applied: heldPayload(d.request.readCompare()), appliedHash: d.hash });
  io.stdout(`recorded ${id} as applied from the repository's spec, without calling the server\n`);
}

/** `gatesync state resolve`: --all-orphans, or one resource (several with --forget). */
export async function resolveResources(config: GatesyncConfig, ids: readonly string[], opts: ResolveOptions, io: CliIo): Promise<void> {
  if (opts.allOrphans === true) {
    if (ids.length > 0 || opts.id !== undefined || opts.accept === true)
      throw new UsageError("--all-orphans forgets the orphaned records: give no resource, --id or --accept with it");
    await forgetOrphans(config, opts, io);
    return;
  }
  const chosen = [opts.id !== undefined, opts.forget === true, opts.accept === true].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError("give exactly one of --id, --forget or --accept");
  if (ids.length === 0) throw new UsageError("name the resource to resolve", { hint: "e.g. `gatesync state resolve ApiProduct/shop --forget`" });
  if (ids.length > 1 && opts.forget !== true)
    throw new UsageError(`${ids.length} resources given: only --forget takes several`, { hint: "resolve them one at a time with --id or --accept" });
  await withLockedState(config, io, "gatesync state resolve", async (backend) => {
    if (opts.forget === true) await forget(config, backend, [...new Set(ids)], io);
    else await resolveOne(config, backend, ids[0]!, opts, io);
  });
}

/** Runs `work` under the state's lock, and closes the state. */
async function withLockedState(config: GatesyncConfig, io: CliIo, owner: string, work: (backend: StateBackend) => Promise<void>): Promise<void> {
  const backend = openStateBackend(config, io.env);
  try {
    const lock = await backend.lock(owner);
    try {
      await work(backend);
    } finally {
      await lock.release();
    }
  } finally {
    await backend.close();
  }
}

/**
 * Drops the records of `ids`, none unless all are there. An id with no record that is an earlier
 * name of records (their rename lineage) is forgotten as that name: the operator means a new
 * object under it, and the next apply creates one (docs/user/renames.md, "What comes back").
 */
async function forget(config: GatesyncConfig, backend: StateBackend, ids: readonly string[], io: CliIo): Promise<void> {
  // payloads are read only for the records written back (the holders of an earlier name forgotten): a large state's are not all read
  const rewritten = (heads: StateSnapshot): ReadonlySet<string> => {
    const former = formerHolders(heads);
    return new Set(ids.filter((id) => !heads.resources.has(id)).flatMap((id) => (former.get(id) ?? []).map((r) => r.id)));
  };
  const heads = await backend.readHeads();
  // read under the state's lock: nothing is written between the two reads
  const snapshot = await backend.readPayloads(heads, rewritten(heads));
  const records = snapshot.resources;
  const holders = formerHolders(snapshot);
  const missing = ids.filter((id) => !records.has(id) && !holders.has(id));
  if (missing.length > 0)
    throw new UsageError(`${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not in the state: nothing forgotten`, {
      hint: withInvocation("`gatesync state list` shows what is", invocationOf(config)),
    });
  for (const id of ids) {
    if (records.has(id)) {
      await backend.remove(id);
      io.stdout(`forgot ${id}\n`);
      continue;
    }
    for (const holder of holders.get(id) ?? []) {
      await backend.write(withoutFormer(holder, id));
      io.stdout(`forgot ${id} as an earlier name of ${holder.id} (which keeps its object): the next apply creates ${id} as a new object\n`);
    }
  }
}

async function resolveOne(config: GatesyncConfig, backend: StateBackend, id: string, opts: ResolveOptions, io: CliIo): Promise<void> {
  const record = (await backend.read()).resources.get(id);
  if (opts.id === undefined) {
    await accept(config, backend, id, record, opts.dir, io);
    return;
  }
  if (record?.status !== "in-doubt")
    throw new UsageError(`${id} is not in doubt`, { hint: "--id settles an in-doubt create; use --accept for other resources" });
  if (knownKind(record.kind)?.serverId === undefined) {
    // an org key's id is its keyId, a dashboard hook has none: a server id would record nothing true
    throw new UsageError(`${id} has no server id to record: the server does not name ${record.kind} objects`, {
      hint: withInvocation(inDoubtHint(record.kind, id, "declared") ?? "`gatesync plan` says what the next apply does with it", invocationOf(config)),
    });
  }
  await backend.write(resolvedRecord(record, opts.id));
  io.stdout(`recorded ${id} as applied, server id ${opts.id}\n`);
}

/** `--forget --all-orphans`: every record whose resource the repository no longer declares, after a `yes` (or --yes). */
async function forgetOrphans(config: GatesyncConfig, opts: ResolveOptions, io: CliIo): Promise<void> {
  const interactive = io.isTty && process.stdin.isTTY === true;
  if (opts.yes !== true && !interactive)
    throw new UsageError("refusing to forget the orphaned records without confirmation", {
      hint: withInvocation("`gatesync state list` marks them; pass --yes to forget them all, or run it on a terminal to be asked", invocationOf(config)),
    });
  const repository = await declaredIdsOf(config, io, opts.dir);
  if (repository.declared === undefined)
    throw new UsageError(`cannot tell which records are orphaned: ${repository.why}`, {
      hint: withInvocation(
        "fix the repository (`gatesync validate`), or name the records: `gatesync state resolve Kind/a Kind/b --forget`",
        invocationOf(config),
      ),
    });
  const declared = repository.declared;
  await withLockedState(config, io, "gatesync state resolve", async (backend) => {
    const orphans = [...(await backend.readHeads()).resources.keys()].filter((id) => !declared.has(id)).sort();
    if (orphans.length === 0) {
      io.stdout("no orphaned records: nothing forgotten\n");
      return;
    }
    io.stdout(`orphaned records (their objects stay on the servers):\n${orphans.map((id) => `  ${id}\n`).join("")}`);
    if (opts.yes !== true && !(await ask(`Forget these ${orphans.length} records? Only 'yes' is accepted: `, new AbortController().signal))) {
      io.stdout("nothing forgotten\n");
      process.exitCode = 1;
      return;
    }
    await forget(config, backend, orphans, io);
  });
}
