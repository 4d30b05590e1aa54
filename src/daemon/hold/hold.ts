/**
 * Whether an environment may apply and promote now (docs/user/promotion.md#freezes-and-windows):
 * not while a freeze is in force (a row of its history: record/freeze-history.ts) or while its
 * sync windows are closed (config/windows-section.ts). A held environment plans but applies and
 * promotes nothing — scheduled runs, webhooks, `promotion: auto`, rollbacks alike — unless the
 * operator overrides it for one promotion or rollback (`--override-freeze`, a field of that
 * promotion's row: the revision it promoted is applied while the hold lasts).
 */
import type { GatesyncConfig } from "../../config/config.js";
import { windowVerdict } from "../../config/windows-section.js";
import type { SyncWindow } from "../../config/windows-section.js";
import { freezeInForce } from "../../record/history/freeze-history.js";
import { readPromotions } from "../../record/history/promotion-history.js";
import type { HistoryStore } from "../../record/history/history.js";

export interface Hold {
  readonly kind: "freeze" | "window";
  /** As every place says it: "production frozen until 18:00 UTC: incident 4521". */
  readonly message: string;
  readonly reason?: string;
  /** When it lifts by itself, if known (ISO time). */
  readonly until?: string;
}

/** A time as the messages say it: `18:00 UTC`, with the date when it is not today's (UTC). */
export function shownTime(at: number, now: number): string {
  const iso = new Date(at).toISOString();
  const today = new Date(now).toISOString().slice(0, 10) === iso.slice(0, 10);
  return `${today ? "" : `${iso.slice(0, 10)} `}${iso.slice(11, 16)} UTC`;
}

const windowText = (w: SyncWindow): string => `${w.kind} "${w.schedule}" ${w.timeZone}`;

/** The hold in force at `now` and when to look again (a freeze's `until`, a window's next change). */
export async function holdOf(name: string, config: GatesyncConfig, state: HistoryStore, now = Date.now()): Promise<{ hold?: Hold; recheckAt?: number }> {
  const freeze = await freezeInForce(state, now);
  if (freeze !== undefined) {
    const until = freeze.until === undefined ? undefined : Date.parse(freeze.until);
    const message = `${name} frozen${until === undefined ? "" : ` until ${shownTime(until, now)}`}: ${freeze.reason}`;
    return {
      hold: { kind: "freeze", message, reason: freeze.reason, ...(freeze.until === undefined ? {} : { until: freeze.until }) },
      ...(until === undefined ? {} : { recheckAt: until }),
    };
  }
  const verdict = windowVerdict(config.windows ?? [], now);
  const recheck = verdict.changesAt === undefined ? {} : { recheckAt: verdict.changesAt };
  if (verdict.closedBy === undefined) return recheck;
  const until = verdict.changesAt === undefined ? "" : ` until ${shownTime(verdict.changesAt, now)}`;
  const what =
    verdict.closedBy.kind === "deny" ? `in its deny window (${windowText(verdict.closedBy)})` : `outside its sync windows (${windowText(verdict.closedBy)})`;
  return {
    hold: {
      kind: "window",
      message: `${name} ${what}${until}`,
      ...(verdict.changesAt === undefined ? {} : { until: new Date(verdict.changesAt).toISOString() }),
    },
    ...recheck,
  };
}

/**
 * An environment's hold as its runs meet it: asked before each apply, a look again scheduled at
 * the time it may lift (a freeze's `until`, a window's next change) — the run then applies what
 * waited — and the gauge told of every change.
 */
export class HoldWatch {
  private timer: NodeJS.Timeout | undefined;
  /** The time the timer looks again at (undefined: none armed). */
  private armedFor: number | undefined;
  /** The hold at the last look; null before the first (the daemon's start says nothing). */
  private seen: Hold | undefined | null = null;
  onChange: ((hold: Hold | undefined) => void) | undefined;
  /** A sync window closed or opened, or a freeze lapsed at its `until`, since the last look (a freeze's other changes are told by the freeze endpoint). */
  onWindow: ((summary: string) => void) | undefined;

  constructor(
    private readonly opts: {
      readonly name: string;
      readonly state: HistoryStore;
      readonly config: () => GatesyncConfig;
      readonly trigger: (reason: string) => void;
    },
  ) {}

  /**
   * The hold now, a look again scheduled at its end. Every reader asks (a page, /status, each
   * run): the freeze row is read each time — another replica may have written it — but the gauge,
   * the notices and the timer change only when what it says does.
   */
  async current(): Promise<Hold | undefined> {
    const { hold, recheckAt } = await holdOf(this.opts.name, this.opts.config(), this.opts.state);
    if (this.seen === null || this.seen?.kind !== hold?.kind) this.onChange?.(hold);
    this.told(hold);
    if (recheckAt !== this.armedFor) this.arm(recheckAt);
    return hold;
  }

  /** The look again at `recheckAt` (none: undefined), in place of the one armed. */
  private arm(recheckAt: number | undefined): void {
    clearTimeout(this.timer);
    this.armedFor = recheckAt;
    if (recheckAt === undefined) return;
    // a little after: the change has surely come when it looks; a timer's delay is capped at 2^31-1 ms.
    // held at the last look, a run then applies what waited; held or not, a look tells the window's change then
    const look = (): void => {
      this.armedFor = undefined;
      if (this.seen !== undefined && this.seen !== null) this.opts.trigger("hold lifted");
      this.current().catch(() => undefined);
    };
    this.timer = setTimeout(look, Math.min(Math.max(0, recheckAt - Date.now()) + 50, 2 ** 31 - 1));
    this.timer.unref();
  }

  /**
   * Tells a window's closing or opening (between no hold and a window's) and a freeze that ended
   * by its `until` — never at the first look; a freeze's other changes are told by its endpoint.
   */
  private told(hold: Hold | undefined): void {
    const before = this.seen;
    this.seen = hold;
    if (before === null) return;
    const lapsed = before?.kind === "freeze" && before.until !== undefined && Date.parse(before.until) <= Date.now() && hold?.kind !== "freeze";
    if (lapsed) this.onWindow?.(`${this.opts.name} freeze ended at its --until: it applies what waited`);
    if (before?.kind === "freeze" || hold?.kind === "freeze") return;
    if (before === undefined && hold !== undefined) this.onWindow?.(hold.message);
    if (before !== undefined && hold === undefined) this.onWindow?.(`${this.opts.name} sync window open: it applies what waited`);
  }

  /** The hold's message when `revision` may not be applied now; undefined when it may (no hold, or a promotion of it overrode the hold). */
  async heldFor(revision: string): Promise<string | undefined> {
    const hold = await this.current();
    if (hold === undefined) return undefined;
    const inForce = (await readPromotions(this.opts.state, 1))[0]?.record;
    return inForce?.overrideFreeze !== undefined && inForce.revision === revision ? undefined : hold.message;
  }
}
