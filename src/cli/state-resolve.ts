/** `gatesync state resolve`: settles a resource by hand (an in-doubt create, a forgotten one, a change made by hand). */
import { invocationOf, withInvocation } from "../printed-commands.js";
import type { GatesyncConfig } from "../config/config.js";
import { UsageError } from "../errors.js";
import { knownKind, serverIdAddress } from "../kinds/registry.js";
import { inDoubtHint } from "../plan/in-doubt.js";
import { unfilledParams } from "../plan/plan-change.js";
import { runPlan } from "../plan/run-plan.js";
import type { PlanRun } from "../plan/run-plan.js";
import { openStateBackend } from "../record/open-backend.js";
import { appliedRecord } from "../apply/applied-record.js";
import type { ResourceRecord, StateBackend } from "../record/state.js";
import { RepositoryValidator } from "../validate/validate-repository.js";
import type { CliIo } from "./cli-io.js";
import { openResources } from "./resources.js";
import { heldPayload } from "../record/lazy-record.js";

export interface ResolveOptions {
  readonly id?: string;
  readonly forget?: boolean;
  readonly accept?: boolean;
  readonly dir?: string;
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

export async function resolveResource(config: GatesyncConfig, id: string, opts: ResolveOptions, io: CliIo): Promise<void> {
  const chosen = [opts.id !== undefined, opts.forget === true, opts.accept === true].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError("give exactly one of --id, --forget or --accept");
  const backend = openStateBackend(config, io.env);
  try {
    const lock = await backend.lock("gatesync state resolve");
    try {
      const record = (await backend.read()).resources.get(id);
      if (opts.forget === true) {
        if (record === undefined)
          throw new UsageError(`${id} is not in the state`, { hint: withInvocation("`gatesync state list` shows what is", invocationOf(config)) });
        await backend.remove(id);
        io.stdout(`forgot ${id}\n`);
      } else if (opts.id !== undefined) {
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
      } else {
        await accept(config, backend, id, record, opts.dir, io);
      }
    } finally {
      await lock.release();
    }
  } finally {
    await backend.close();
  }
}
