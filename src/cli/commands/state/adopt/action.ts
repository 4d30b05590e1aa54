/** The action of `gatesync state adopt Kind/name --id ID` (state-adopt-command.ts declares it). */
import { UsageError } from "../../../../errors.js";
import type { KindName } from "../../../../kinds/kind.js";
import { adoptableKinds, isAdoptable, isKindName, kindNames, serverIdAddress } from "../../../../kinds/registry.js";
import { openStateBackend } from "../../../../record/open-backend.js";
import type { ResourceRecord } from "../../../../record/state.js";
import type { CliIo } from "../../../common/cli-io.js";
import { environmentConfig } from "../../../common/environment-option.js";

function parseTarget(id: string): { kind: KindName; name: string } {
  const slash = id.indexOf("/");
  const kind = id.slice(0, slash);
  if (slash <= 0 || slash === id.length - 1 || !isKindName(kind))
    throw new UsageError(`${JSON.stringify(id)} is not Kind/name`, `e.g. ${adoptableKinds()[0] ?? kindNames[0]}/storefront; kinds: ${kindNames.join(", ")}`);
  if (!isAdoptable(kind)) {
    throw new UsageError(
      `${kind} cannot be adopted: gatesync never creates it, it addresses the object by the id in its spec`,
      `kinds that can be adopted: ${adoptableKinds().join(", ")}`,
    );
  }
  return { kind, name: id.slice(slash + 1) };
}

/** Records `id` as the object `opts.id` on the server. */
export async function adoptAction(id: string, opts: { id: string; config: string; env?: string }, io: CliIo): Promise<void> {
  const { kind, name } = parseTarget(id);
  const serverId = opts.id.trim();
  if (serverId === "") throw new UsageError("--id is empty", "give the object's id as the server shows it");
  const backend = openStateBackend(await environmentConfig(opts.config, opts.env, "state adopt"), io.env);
  try {
    const lock = await backend.lock("gatesync state adopt");
    try {
      const snapshot = await backend.read();
      const existing = snapshot.resources.get(id);
      if (existing !== undefined && (existing.applied !== undefined || existing.status === "in-doubt")) {
        const how =
          existing.status === "in-doubt"
            ? `\`gatesync state resolve ${id} --id ${serverId}\` settles an in-doubt create`
            : `\`gatesync state resolve ${id} --forget\` first if the record is wrong`;
        throw new UsageError(`${id} is already recorded (${existing.status}${existing.serverId === undefined ? "" : `, server id ${existing.serverId}`})`, {
          hint: how,
        });
      }
      const holder = [...snapshot.resources.values()].find((r) => r.kind === kind && r.serverId === serverId && r.id !== id);
      if (holder !== undefined)
        throw new UsageError(`server id ${serverId} is already recorded for ${holder.id}: one object cannot be two resources`, {
          hint: `check the id; \`gatesync state resolve ${holder.id} --forget\` if that record is wrong`,
        });
      if (snapshot.serial === 0) await backend.initialise(undefined);
      const now = new Date().toISOString();
      const record: ResourceRecord = {
        id,
        kind,
        name,
        address: { ...existing?.address, ...serverIdAddress(kind, serverId) },
        serverId,
        status: "applied",
        adopted: { at: now, source: "command", verified: false },
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
      };
      await backend.write(record);
      io.stdout(`adopted ${id} as server id ${serverId} (not verified: the interfaces cannot read it); the next plan shows what the apply will do\n`);
    } finally {
      await lock.release();
    }
  } finally {
    await backend.close();
  }
}

/** How `state list` shows an adoption. */
export function adoptedText(r: ResourceRecord): string {
  if (r.adopted === undefined) return "";
  return r.adopted.verified ? " [adopted; an update by its id was accepted]" : " [adopted; not verified]";
}
