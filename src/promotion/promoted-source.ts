/**
 * The source of an environment promoted from another (`track: { promotedFrom: ENV }`,
 * docs/user/promotion.md): the revision in force is its newest promotion row — in its own state,
 * so every replica that leads it runs the same one — and nothing before the first. It only reads:
 * `promotion: auto` writes its rows in a step of the loop of its own before the fetch
 * (auto-promotion.ts), never here.
 */
import { ErrorCode, SourceError } from "../errors.js";
import { readPromotions } from "../record/history/promotion-history.js";
import type { HistoryStore } from "../record/history/history.js";
import type { FetchRequest, Source, SourceSnapshot } from "../source/source.js";

/**
 * The daemon's shared source as promotion reads it: fetched (the clone brought up to date), and
 * any commit's files. Structural, so promotion needs nothing of the daemon (daemon/environments/shared-source.ts is one).
 */
export type CommitSource = Pick<Source, "description" | "fetch"> & Required<Pick<Source, "at" | "commitsBetween">>;

export interface PromotedSourceOptions {
  readonly inner: CommitSource;
  /** This environment's state: its promotion rows. */
  readonly state: HistoryStore;
  readonly name: string;
  readonly from: string;
}

export class PromotedSource implements Source {
  readonly description: string;

  constructor(private readonly opts: PromotedSourceOptions) {
    this.description = `${opts.inner.description}, promoted from ${opts.from}`;
  }

  async fetch(request: FetchRequest = {}): Promise<SourceSnapshot> {
    // the clone brought up to date: a promoted commit is one the repository has
    await this.opts.inner.fetch(request);
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
