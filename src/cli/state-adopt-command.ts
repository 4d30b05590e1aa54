/** `gatesync state adopt Kind/name --id ID`: record an object made by hand, so the next apply does not create it again. */
import type { Command } from "commander";
import { adoptableKinds, adoptAnnotation } from "../plan/adoption.js";
import { UsageError } from "../errors.js";
import type { KindName } from "../kinds/kind.js";
import { kindNames, serverIdAddress } from "../kinds/registry.js";
import { openStateBackend } from "../record/open-backend.js";
import type { ResourceRecord } from "../record/state.js";
import type { CliIo } from "./plan-command.js";
import { envOptionHelpOne, environmentConfig } from "./environment-option.js";

function parseTarget(id: string): { kind: KindName; name: string } {
  const slash = id.indexOf("/");
  const kind = id.slice(0, slash);
  if (slash <= 0 || slash === id.length - 1 || !(kindNames as readonly string[]).includes(kind))
    throw new UsageError(`${JSON.stringify(id)} is not Kind/name`, `e.g. ApiProduct/storefront; kinds: ${kindNames.join(", ")}`);
  if (!adoptableKinds.includes(kind as KindName)) {
    throw new UsageError(
      `${kind} cannot be adopted: gatesync never creates it, it addresses the object by the id in its spec`,
      `kinds that can be adopted: ${adoptableKinds.join(", ")}`,
    );
  }
  return { kind: kind as KindName, name: id.slice(slash + 1) };
}

export function addStateAdoptCommand(state: Command, io: CliIo): void {
  state
    .command("adopt")
    .description(
      `record an object that already exists on the server (made by hand) under its id, so the next apply does not create it again (or annotate the resource with ${adoptAnnotation})`,
    )
    .argument("<resource>", "Kind/name")
    .requiredOption("--id <id>", "the object's id on the server")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--env <name>", envOptionHelpOne)
    .action(async (id: string, opts: { id: string; config: string; env?: string }) => {
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
    });
}

/** How `state list` shows an adoption. */
export function adoptedText(r: ResourceRecord): string {
  if (r.adopted === undefined) return "";
  return r.adopted.verified ? " [adopted; an update by its id was accepted]" : " [adopted; not verified]";
}
