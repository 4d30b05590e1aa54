/** The action of `gatesync unfreeze` (command.ts declares it): POST /environments/NAME/unfreeze of the daemon, with the promotion token. */
import type { CliIo } from "../../common/cli-io.js";
import { askHold, holdText } from "../../common/promotion-daemon.js";
import type { FreezeOptions } from "../../common/promotion-daemon.js";

export async function unfreezeAction(env: string, opts: FreezeOptions, io: CliIo): Promise<void> {
  const answer = await askHold(env, "unfreeze", opts.reason === undefined ? {} : { reason: opts.reason }, opts, io);
  const still = holdText(answer);
  io.stdout(still === undefined ? `${env} unfrozen: it applies what waited now\n` : `${env} unfrozen, but still held: ${still}\n`);
}
