/**
 * The pace of each target, shared by every apply of one process: two environments of a daemon
 * that send to one gateway with one credential keep that gateway's rate together, as the gateway
 * counts them (a pacer per apply let each send at the full rate: twice the limit for two).
 *
 * A target is its URL and credential: one gateway reached with two credentials is counted by the
 * gateway per key, so each key keeps its own pace. The key is a hash, never the credential.
 */
import { createHash } from "node:crypto";
import { SendPacer } from "./send-pacer.js";

export class TargetPacers {
  private readonly pacers = new Map<string, SendPacer>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The pacer of the target at `url` reached with `credential` (the header's value); `maxRate` sizes a new one. */
  pacerOf(url: string, credential: string, maxRate: number): SendPacer {
    const key = createHash("sha256").update(url).update("\0").update(credential).digest("hex");
    let pacer = this.pacers.get(key);
    if (pacer === undefined) this.pacers.set(key, (pacer = new SendPacer(maxRate, this.now)));
    return pacer;
  }
}
