/**
 * The source of an environment promoted from another (`track: { promotedFrom: ENV }`,
 * docs/user/promotion.md): the revision in force is its newest promotion row — in its own state,
 * so every replica that leads it runs the same one — and nothing before the first. With
 * `promotion: auto`, each fetch first promotes the source's newest verified candidate, when there
 * is one newer than the promotion in force (promotion.ts); a replica leading this environment
 * but not its source sees the source's verifications in the source's state.
 */
import { ErrorCode, SourceError } from "../errors.js";
import { readPromotions } from "../record/history/promotion-history.js";
import type { HistoryStore } from "../record/history/history.js";
import type { FetchRequest, Source, SourceSnapshot } from "../source/source.js";
import type { SharedSource } from "../daemon/environments/shared-source.js";

export interface PromotedSourceOptions {
  readonly inner: SharedSource;
  /** This environment's state: its promotion rows. */
  readonly state: HistoryStore;
  readonly name: string;
  readonly from: string;
  /** `promotion: auto`: promotes the newest candidate when it is newer than the promotion in force. */
  readonly autoPromote?: () => Promise<void>;
}

export class PromotedSource implements Source {
  readonly description: string;

  constructor(private readonly opts: PromotedSourceOptions) {
    this.description = `${opts.inner.description}, promoted from ${opts.from}`;
  }

  async fetch(request: FetchRequest = {}): Promise<SourceSnapshot> {
    // the clone brought up to date: a promoted commit is one the repository has
    await this.opts.inner.fetch(request);
    await this.opts.autoPromote?.();
    const inForce = (await readPromotions(this.opts.state, 1))[0];
    if (inForce === undefined)
      throw new SourceError(
        ErrorCode.SOURCE_NOT_PROMOTED,
        `nothing promoted to ${this.opts.name} yet: it applies a revision once ${this.opts.from} verified it and it is promoted`,
        {
          hint: `gatesync promote ${this.opts.name}, or set environments.${this.opts.name}.promotion: auto`,
        },
      );
    return this.opts.inner.at(inForce.record.revision);
  }

  commitsBetween(from: string, to: string): Promise<number | undefined> {
    return this.opts.inner.commitsBetween(from, to);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
