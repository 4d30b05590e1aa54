/**
 * Leases of a fleet: several replicas of `gatesync run` on one PostgreSQL database share the
 * environments, each led by exactly one replica at a time through a lease of its own
 * (lease-table.ts). Every `renewMs` a replica says it is alive, renews its leases, gives back
 * what exceeds its share (ceil(environments / live replicas)) and takes free or expired ones up
 * to that share.
 *
 * The fence is local and synchronous (`check`): a lease is valid here until the time its last
 * renewal was *sent* plus the lease's time less a margin — earlier than PostgreSQL lets anyone
 * else take it. A replica paused (SIGSTOP, a frozen VM) or cut off from the database finds its
 * leases expired the moment it runs again, before it could send anything, whatever its event
 * loop does first. A replica that takes over an expired lease also ends the previous holder's
 * database sessions, so a state lock it still held is released and it can write nothing more.
 *
 * A renewal extends only the leases held here, by fencing token. A statement whose answer never
 * came (a timeout, a broken connection) is resolved before the next renewal, never assumed: the
 * connection is dropped, its backend ended on reconnect (lease-session.ts), and every tick gives
 * back what the table says this replica holds but it does not hold here. So a renewal that ran
 * on the server after the replica gave up on it orphans nothing: the table names a holder only
 * while that holder leads (to within one renewal).
 *
 * Triggers travel over LISTEN/NOTIFY on the lease connection (fleet-messages.ts).
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { ErrorCode, StateError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { FleetMessage, FleetReason, ForwardOutcome } from "./fleet-messages.js";
import { PendingTriggers, decodeFleetMessage, encodeFleetMessage, fleetChannel, forwardTrigger } from "./fleet-messages.js";
import { LeaseTable, fleetApplicationName, freeLeases, ownedSinceRead } from "./lease-table.js";
import type { HolderRow, LeaseRow } from "./lease-table.js";
import { endSessions, leaseClientConfig, leaseTiming } from "./lease-session.js";
import type { LeaseTiming } from "./lease-session.js";
import { expiryWake, leadershipProblems, leaseDeadline, renewalKeeps, roundAction, shareOf, toGiveBack } from "./lease-decisions.js";
import type { FleetLeasesOptions } from "./leases-options.js";

interface Held {
  readonly token: number;
  /** performance.now() until which the lease is surely still this replica's. */
  deadline: number;
}

export class FleetLeases {
  readonly id = randomBytes(4).toString("hex");
  readonly name: string;
  private readonly table: LeaseTable;
  private readonly timing: LeaseTiming;
  private readonly held = new Map<string, Held>();
  /** Backends of dropped lease connections, not yet known to be gone (a statement may be queued on one). */
  private readonly unsettled = new Set<number>();
  private readonly pending = new PendingTriggers();
  private readonly log: Logger;
  private client: pg.Client | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake = new AbortController();
  private lapseTimer: NodeJS.Timeout | undefined;
  private roundOver: () => void = () => undefined;
  private readonly roundDone = new Promise<void>((resolve) => (this.roundOver = resolve));
  /** Live replicas at the last tick (itself included). */
  private live = 1;
  /** The lease table as last read (every tick reads it before taking anything), and when. */
  private lastRead: { readonly rows: HolderRow[]; readonly at: number } | undefined;

  constructor(private readonly opts: FleetLeasesOptions) {
    this.name = opts.replica ?? `${hostname()}:${process.pid}`;
    this.timing = leaseTiming(opts.ttlMs, opts.renewMs);
    this.table = new LeaseTable(opts.schema, this.timing.ttlMs);
    this.log = opts.logger.child({ component: "fleet", replica: this.name });
  }

  /** The application_name of this replica's sessions (the state's too): a takeover ends them all. */
  get applicationName(): string {
    return fleetApplicationName(this.id, this.name);
  }

  start(): void {
    this.loop = this.run();
  }

  /**
   * Settles once the first round has taken what this replica may lead (or failed): a daemon starts its runs
   * after it, so a first run — the only one of `run --once` — is not a standby's only because the lease was not asked for yet.
   */
  firstRound(): Promise<void> {
    return this.roundDone;
  }

  /** How long a trigger this replica carries waits for the leaders' acknowledgements (lease-session.ts: from the lease times). */
  get ackTimeoutMs(): number {
    return this.timing.ackMs;
  }

  /** Whether this replica leads `environment` now. */
  leads(environment: string): boolean {
    const h = this.held.get(environment);
    return h !== undefined && performance.now() < h.deadline;
  }

  /** The fence: throws STATE_LOCK_LOST unless this replica still leads `environment`. */
  check(environment: string): void {
    if (this.leads(environment)) return;
    throw new StateError(
      ErrorCode.STATE_LOCK_LOST,
      `this replica (${this.name}) no longer leads environment ${environment}: its lease expired or was taken over`,
      { hint: "another replica leads it now and applies its next run; nothing more was sent by this one" },
    );
  }

  /** The environments this replica leads now. */
  leading(): string[] {
    return this.opts.environments.filter((e) => this.leads(e));
  }

  /** Live replicas at the last tick. */ get replicas(): number {
    return this.live;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      // armed before the round: a `released` heard during it skips the wait after it
      this.wake = new AbortController();
      try {
        this.client ??= await this.connect();
        await this.tick(this.client);
        failures = 0;
      } catch (err) {
        if (!this.stopped) this.log.warn({ err: (err as Error).message }, "fleet: lease database unavailable; leases lapse unless renewed");
        this.drop();
        this.forgetStaleRead();
        failures++;
      }
      this.lapse();
      this.roundOver();
      const renew = this.timing.renewMs;
      // while leases are held, retry at once on the next round: one failed renewal need not lose them
      const wait = failures === 0 || this.held.size > 0 ? renew : Math.min(Math.max(renew, this.timing.ttlMs / 2), renew * 2 ** Math.min(failures, 3));
      await sleep(wait, undefined, { signal: this.wake.signal }).catch(() => undefined);
    }
  }

  /** Drops the lease connection: a statement still running on it has an unknown outcome, settled on reconnect. */
  private drop(): void {
    const c = this.client;
    this.client = undefined;
    if (c === undefined) return;
    // the backend's pid, from its BackendKeyData (pg does not declare it)
    const pid = (c as unknown as { processID?: number | null }).processID;
    if (typeof pid === "number") this.unsettled.add(pid);
    c.end().catch(() => undefined);
  }

  /**
   * Leases whose local time is up are lost here, whether or not the database said so; a timer
   * does it at the next deadline, so a tick waiting on a silent database delays nothing.
   */
  private lapse(): void {
    for (const [env, h] of this.held) if (performance.now() >= h.deadline) this.lose(env, "its lease lapsed (not renewed in time)");
    clearTimeout(this.lapseTimer);
    const next = Math.min(...[...this.held.values()].map((h) => h.deadline));
    if (Number.isFinite(next)) this.lapseTimer = setTimeout(() => this.lapse(), Math.max(0, next - performance.now()) + 1).unref();
  }

  private lose(environment: string, why: string): void {
    if (!this.held.delete(environment)) return;
    this.log.warn({ environment, why }, "fleet: lease lost");
    this.opts.onLose?.(environment);
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client(leaseClientConfig(this.opts.url, this.applicationName, this.timing));
    client.on("error", (err) => {
      if (this.client !== client) return;
      this.log.warn({ err: err.message }, "fleet: lease connection lost; reconnecting");
      this.drop();
    });
    client.on("notification", (n) => this.heard(n.payload));
    try {
      await client.connect();
      await this.settle(client);
      await client.query(`LISTEN ${fleetChannel}`);
      await this.table.prepare(client, this.opts.environments);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.log.info({ channel: fleetChannel, environments: this.opts.environments.length }, "fleet: connected; listening for triggers");
    return client;
  }

  /**
   * Before anything is renewed on a new connection: the backends of the dropped ones are ended
   * and gone, so no statement sent on them runs from now on (else endSessions throws and this
   * connection is given up).
   */
  private async settle(client: pg.Client): Promise<void> {
    const gone = await endSessions(client, [...this.unsettled], this.applicationName, this.timing.queryTimeoutMs);
    for (const pid of gone) this.unsettled.delete(pid);
    if (gone.length > 0) this.log.info({ backends: gone }, "fleet: the sessions of dropped lease connections were ended");
  }

  /** One round: alive, renew what is held here, give back what exceeds the share, take free leases up to it. */
  private async tick(client: pg.Client): Promise<void> {
    const timeout = this.timing.queryTimeoutMs;
    this.live = await this.table.heartbeat(client, this.id, this.name, this.opts.ownUrl?.(), timeout);
    this.lapse();
    const stray = await this.table.releaseStray(client, this.id, this.heldRows(), timeout);
    if (stray.length > 0) this.log.warn({ leases: stray }, "fleet: leases the table gave this replica but it did not hold were given back");
    await this.renewHeld(client, timeout);
    // read before taking: a take that waits (a locked row) leaves the fleet's view of the table current
    const rows = await this.table.holders(client, this.opts.environments, timeout);
    this.lastRead = { rows, at: performance.now() };
    this.opts.onLeases?.(rows);
    // a dead replica's leases are taken as they run out, not a round later
    const wakeIn = expiryWake(rows, this.id, this.timing.renewMs);
    if (wakeIn !== undefined) setTimeout((round: AbortController) => round.abort(), wakeIn, this.wake).unref();
    const { give, take } = roundAction(this.held.size, shareOf(this.opts.environments.length, this.live));
    if (give > 0) await this.giveBack(client, give);
    else if (take > 0) await this.take(client, take, timeout, freeLeases(rows));
  }

  /** A read of the table older than a lease says nothing any more: forgotten. */
  private forgetStaleRead(): void {
    if (this.lastRead === undefined || performance.now() - this.lastRead.at <= this.timing.ttlMs) return;
    this.lastRead = undefined;
    this.opts.onLeases?.(undefined);
  }

  private heldRows(): LeaseRow[] {
    return [...this.held].map(([environment, h]) => ({ environment, token: h.token }));
  }

  /** Extends each lease held here, by its token; one the table no longer gives this replica is lost. */
  private async renewHeld(client: pg.Client, timeout: number): Promise<void> {
    const sent = performance.now();
    const kept = new Map((await this.table.renew(client, this.id, this.heldRows(), timeout)).map((r) => [r.environment, r.token]));
    for (const [env, h] of this.held) {
      if (renewalKeeps(h.token, kept.get(env))) h.deadline = this.deadlineFrom(sent);
      else this.lose(env, "its lease was taken over or expired");
    }
  }

  /** A lease is surely this replica's until its renewal's sending time plus the lease, less the margin. */
  private deadlineFrom(sent: number): number {
    return leaseDeadline(sent, this.timing.ttlMs, this.timing.marginMs);
  }

  private async take(client: pg.Client, wanted: number, timeout: number, free: readonly string[]): Promise<void> {
    for (const env of free) {
      if (wanted <= 0 || this.stopped) return;
      const sent = performance.now();
      const got = await this.table.acquire(client, env, { id: this.id, name: this.name }, timeout);
      if (got === undefined) continue;
      wanted--;
      this.held.set(env, { token: got.token, deadline: this.deadlineFrom(sent) });
      if (got.previous !== null && got.previous !== this.id) {
        const ended = await this.table.fenceOff(client, got.previous);
        this.log.info(
          { environment: env, previous: got.previous, sessionsEnded: ended },
          "fleet: took over an expired lease; the previous holder's sessions were ended",
        );
      }
      this.log.info({ environment: env, token: got.token }, "fleet: lease acquired");
      this.opts.onAcquire?.(env);
    }
  }

  /** Gives back `n` leases of environments not applying now, so that a replica that joined gets its share. */
  private async giveBack(client: pg.Client, n: number): Promise<void> {
    const given = toGiveBack(this.held.keys(), (e) => this.opts.busy?.(e) === true, n);
    for (const env of given) {
      const h = this.held.get(env)!;
      this.held.delete(env);
      this.opts.onLose?.(env);
      await this.table.release(client, env, this.id, h.token);
      this.log.info({ environment: env, replicas: this.live }, "fleet: lease given back to spread the environments");
    }
    if (given.length > 0) await this.notify(client, { kind: "released", schema: this.opts.schema, from: this.name });
  }

  private heard(payload: string | undefined): void {
    const m = decodeFleetMessage(payload, this.opts.schema);
    if (m === undefined) return;
    if (m.kind === "ack") return this.pending.acknowledge(m.nonce, m.environments, m.from);
    if (m.kind === "released") {
      if (m.from !== this.name) this.wake.abort();
      return;
    }
    const mine = m.environments.filter((e) => this.leads(e));
    if (mine.length === 0 || this.client === undefined) return;
    this.log.info({ environments: mine, reason: m.reason, from: m.from }, "fleet: trigger received from another replica");
    this.opts.onTrigger?.(mine, m.reason, m.from, m.traceparent);
    const ack: FleetMessage = { kind: "ack", schema: this.opts.schema, environments: mine, nonce: m.nonce, from: this.name };
    this.notify(this.client, ack).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, "fleet: could not acknowledge a trigger"));
  }

  private async notify(client: pg.Client, m: FleetMessage): Promise<void> {
    await client.query("SELECT pg_notify($1, $2)", [fleetChannel, encodeFleetMessage(m)]);
  }

  /**
   * Has each environment's leader run a trigger: those this replica leads here, the others
   * through their leaders' acknowledgements (those none acknowledged in time are `missing`).
   */
  async forward(environments: readonly string[], reason: FleetReason, traceparent?: string): Promise<ForwardOutcome> {
    const client = this.client;
    return forwardTrigger(environments, reason, traceparent, {
      name: this.name,
      schema: this.opts.schema,
      leads: (e) => this.leads(e),
      runHere: (mine) => this.opts.onTrigger?.(mine, reason, this.name, traceparent),
      pending: this.pending,
      ackTimeoutMs: this.timing.ackMs,
      send: client === undefined ? undefined : (m) => this.notify(client, m),
    });
  }

  /** Who leads each environment, as the lease table said at the last tick (for /status); undefined when it could not be read. */
  holders(): readonly HolderRow[] | undefined {
    this.forgetStaleRead();
    const rows = this.lastRead?.rows;
    return rows === undefined ? undefined : ownedSinceRead(rows, this, (e) => (this.leads(e) ? this.held.get(e)?.token : undefined));
  }

  /** Environments nobody leads, and any this replica leads while the table names another live leader (/status). */
  leadership(): { readonly leaderless: string[]; readonly ledTwice: string[] } | undefined {
    const rows = this.lastRead?.rows;
    return rows === undefined ? undefined : leadershipProblems(rows, this.id, (e) => this.leads(e));
  }

  /** Gives every lease back (the others take them at once) and disconnects. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake.abort();
    await this.loop;
    const client = this.client;
    const held = [...this.held];
    for (const [env] of held) this.lose(env, "stopping");
    if (client !== undefined) {
      for (const [env, h] of held) await this.table.release(client, env, this.id, h.token).catch(() => undefined);
      // gone from the count before the others look: their share grows to take what was released
      await this.table.leave(client, this.id).catch(() => undefined);
      if (held.length > 0) await this.notify(client, { kind: "released", schema: this.opts.schema, from: this.name }).catch(() => undefined);
    }
    this.drop();
  }
}
