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
 * Triggers travel over LISTEN/NOTIFY on the lease connection (fleet-messages.ts).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { ErrorCode, StateError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { FleetMessage, FleetReason } from "./fleet-messages.js";
import { PendingTriggers, decodeFleetMessage, encodeFleetMessage, fleetChannel } from "./fleet-messages.js";
import { LeaseTable, fleetApplicationName } from "./lease-table.js";
import type { HolderRow } from "./lease-table.js";

export interface FleetLeasesOptions {
  readonly url: string;
  /** The schema of the fleet's tables (the state's). */
  readonly schema: string;
  readonly environments: readonly string[];
  readonly logger: Logger;
  /** This replica's name in logs, messages and /status (default host:pid). */
  readonly replica?: string;
  /** This replica's HTTP address, recorded for /status. */
  readonly ownUrl?: () => string | undefined;
  /** How long a lease lasts without renewal (default 5 s). */
  readonly ttlMs?: number;
  /** How often leases are renewed (default 1 s). */
  readonly renewMs?: number;
  /** How long a forwarded trigger waits for the leaders' acknowledgements (default 2 s). */
  readonly ackTimeoutMs?: number;
  readonly onAcquire?: (environment: string) => void;
  readonly onLose?: (environment: string) => void;
  /** A trigger another replica received, for environments this one leads. */
  readonly onTrigger?: (environments: readonly string[], reason: FleetReason, from: string, traceparent: string | undefined) => void;
  /** Whether an environment is applying now (a lease given back to spread the fleet is one that is not). */
  readonly busy?: (environment: string) => boolean;
}

interface Held {
  readonly token: number;
  /** performance.now() until which the lease is surely still this replica's. */
  deadline: number;
}

export interface ForwardOutcome {
  /** Who took each environment (this replica's name for those it leads). */
  readonly leaders: ReadonlyMap<string, string>;
  /** Environments no leader acknowledged in time. */
  readonly missing: readonly string[];
  readonly ms: number;
}

export class FleetLeases {
  readonly id = randomBytes(4).toString("hex");
  readonly name: string;
  private readonly table: LeaseTable;
  private readonly ttl: number;
  private readonly renew: number;
  private readonly held = new Map<string, Held>();
  private readonly pending = new PendingTriggers();
  private readonly log: Logger;
  private client: pg.Client | undefined;
  private reader: pg.Pool | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: AbortController | undefined;
  /** Live replicas at the last tick (itself included). */
  private live = 1;

  constructor(private readonly opts: FleetLeasesOptions) {
    this.name = opts.replica ?? `${hostname()}:${process.pid}`;
    this.ttl = opts.ttlMs ?? 5_000;
    this.renew = opts.renewMs ?? 1_000;
    this.table = new LeaseTable(opts.schema, this.ttl);
    this.log = opts.logger.child({ component: "fleet", replica: this.name });
  }

  /** The application_name of this replica's sessions (the state's too): a takeover ends them all. */
  get applicationName(): string {
    return fleetApplicationName(this.id, this.name);
  }

  start(): void {
    this.loop = this.run();
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
      {
        hint: "another replica leads it now and applies its next run; nothing more was sent by this one",
      },
    );
  }

  /** The environments this replica leads now. */
  leading(): string[] {
    return this.opts.environments.filter((e) => this.leads(e));
  }

  /** Live replicas at the last tick. */
  get replicas(): number {
    return this.live;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        this.client ??= await this.connect();
        await this.tick(this.client);
        failures = 0;
      } catch (err) {
        if (!this.stopped) this.log.warn({ err: (err as Error).message }, "fleet: lease database unavailable; leases lapse unless renewed");
        this.drop();
        failures++;
      }
      this.lapse();
      const wait = failures === 0 ? this.renew : Math.min(5_000, this.renew * 2 ** Math.min(failures, 3));
      this.wake = new AbortController();
      await sleep(wait, undefined, { signal: this.wake.signal }).catch(() => undefined);
    }
  }

  private drop(): void {
    const c = this.client;
    this.client = undefined;
    c?.end().catch(() => undefined);
  }

  /** Leases whose local time is up are lost here, whether or not the database said so. */
  private lapse(): void {
    for (const [env, h] of this.held) if (performance.now() >= h.deadline) this.lose(env, "its lease lapsed (not renewed in time)");
  }

  private lose(environment: string, why: string): void {
    if (!this.held.delete(environment)) return;
    this.log.warn({ environment, why }, "fleet: lease lost");
    this.opts.onLose?.(environment);
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.opts.url, connectionTimeoutMillis: 5_000, keepAlive: true, application_name: this.applicationName });
    client.on("error", (err) => {
      if (this.client !== client) return;
      this.log.warn({ err: err.message }, "fleet: lease connection lost; reconnecting");
      this.drop();
    });
    client.on("notification", (n) => this.heard(n.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${fleetChannel}`);
      await this.table.prepare(client, this.opts.environments);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.log.info({ channel: fleetChannel, environments: this.opts.environments.length }, "fleet: connected; listening for triggers");
    return client;
  }

  /** One round: alive, renew, give back what exceeds the share, take free leases up to it. */
  private async tick(client: pg.Client): Promise<void> {
    const timeout = Math.max(200, Math.floor(this.ttl / 2));
    this.live = await this.table.heartbeat(client, this.id, this.name, this.opts.ownUrl?.(), timeout);
    const sent = performance.now();
    const kept = new Map((await this.table.renew(client, this.id, timeout)).map((r) => [r.environment, r.token]));
    for (const [env, h] of this.held) {
      if (kept.get(env) === h.token) h.deadline = this.deadlineFrom(sent);
      else this.lose(env, "its lease was taken over or expired");
    }
    const share = Math.ceil(this.opts.environments.length / Math.max(1, this.live));
    if (this.held.size > share) await this.giveBack(client, this.held.size - share);
    else if (this.held.size < share) await this.take(client, share - this.held.size, timeout);
  }

  /** The margin keeps the local end of a lease before PostgreSQL's (clocks run at slightly different rates). */
  private deadlineFrom(sent: number): number {
    return sent + this.ttl - Math.max(this.renew, this.ttl / 5);
  }

  private async take(client: pg.Client, wanted: number, timeout: number): Promise<void> {
    const free = await this.table.free(client, this.opts.environments, timeout);
    // replicas starting together try the free leases in different orders
    for (const env of shuffle(free)) {
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
    const idle = [...this.held.keys()].filter((e) => this.opts.busy?.(e) !== true).sort();
    const given = idle.slice(-n);
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
      if (m.from !== this.name) this.wake?.abort();
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
    const t0 = performance.now();
    const mine = environments.filter((e) => this.leads(e));
    if (mine.length > 0) this.opts.onTrigger?.(mine, reason, this.name, traceparent);
    const leaders = new Map(mine.map((e) => [e, this.name]));
    const rest = environments.filter((e) => !leaders.has(e));
    const ms = (): number => Math.round(performance.now() - t0);
    if (rest.length === 0) return { leaders, missing: [], ms: ms() };
    const client = this.client;
    if (client === undefined) return { leaders, missing: rest, ms: ms() };
    const nonce = randomUUID();
    const acked = this.pending.expect(nonce, rest, this.opts.ackTimeoutMs ?? 2_000);
    try {
      const trace = traceparent === undefined ? {} : { traceparent };
      await this.notify(client, { kind: "trigger", schema: this.opts.schema, environments: rest, reason, nonce, from: this.name, ...trace });
    } catch {
      this.pending.cancel(nonce);
    }
    const answer = await acked;
    for (const [e, who] of answer.leaders) leaders.set(e, who);
    return { leaders, missing: answer.missing, ms: ms() };
  }

  /** Who leads each environment, as the lease table says (for /status). */
  async holders(): Promise<HolderRow[]> {
    if (this.reader === undefined) {
      this.reader = new pg.Pool({ connectionString: this.opts.url, max: 1, idleTimeoutMillis: 10_000, application_name: this.applicationName });
      // an idle client that loses its connection must not crash the process
      this.reader.on("error", () => undefined);
    }
    return this.table.holders(this.reader, this.opts.environments);
  }

  /** Gives every lease back (the others take them at once) and disconnects. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.abort();
    await this.loop;
    const client = this.client;
    const held = [...this.held];
    for (const [env] of held) this.lose(env, "stopping");
    if (client !== undefined) {
      for (const [env, h] of held) await this.table.release(client, env, this.id, h.token).catch(() => undefined);
      if (held.length > 0) await this.notify(client, { kind: "released", schema: this.opts.schema, from: this.name }).catch(() => undefined);
    }
    this.drop();
    await this.reader?.end().catch(() => undefined);
  }
}

function shuffle<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
