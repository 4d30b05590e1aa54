/**
 * Leader election among replicas of `gatesync run`: a PostgreSQL session advisory lock held
 * on a dedicated connection. Only the holder applies. A heartbeat checks the connection every
 * `heartbeatMs`; when it fails, leadership is given up at once (and the caller stops starting
 * calls). Standbys try again every `retryMs`, so a replica takes over within seconds of the
 * leader's connection dropping (process killed, network cut).
 *
 * The same connection carries triggers a standby received to the leader (trigger-relay.ts):
 * it LISTENs before it tries the lock, so whoever holds the lock hears them.
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { hostname } from "node:os";
import type { Logger } from "../logger.js";
import { lockKeys } from "./postgres-backend.js";
import type { ForwardResult, ForwardedReason, RelayMessage } from "./trigger-relay.js";
import { PendingAcks, decodeMessage, encodeMessage, triggerChannel } from "./trigger-relay.js";

export interface LeaderOptions {
  readonly url: string;
  readonly schema: string;
  readonly logger: Logger;
  readonly retryMs?: number;
  readonly heartbeatMs?: number;
  /** Told of every change of leadership. */
  readonly onChange?: (leader: boolean) => void;
  /** Told, on the leader, of a trigger a standby received. */
  readonly onTrigger?: (reason: ForwardedReason, from: string, traceparent: string | undefined) => void;
  /** How long a standby waits for the leader to acknowledge a forwarded trigger (default 2 s). */
  readonly ackTimeoutMs?: number;
  /** This replica's name in logs and messages (default host:pid). */
  readonly replica?: string;
}

export class LeaderElector {
  private leader = false;
  private client: pg.Client | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly acks = new PendingAcks();
  private readonly replica: string;
  /** Connections made so far: the second and later are reconnections, and say so. */
  private connections = 0;

  constructor(private readonly opts: LeaderOptions) {
    this.replica = opts.replica ?? `${hostname()}:${process.pid}`;
  }

  isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    this.loop = this.run();
  }

  private set(leader: boolean): void {
    if (this.leader === leader) return;
    this.leader = leader;
    this.opts.logger.info({ leader }, leader ? "leadership acquired" : "leadership lost");
    this.opts.onChange?.(leader);
  }

  private async run(): Promise<void> {
    const retry = this.opts.retryMs ?? 1_000;
    const heartbeat = this.opts.heartbeatMs ?? 1_000;
    let failures = 0;
    while (!this.stopped) {
      try {
        if (this.client === undefined) {
          this.client = await this.connect();
          failures = 0;
        }
        if (!this.leader) {
          const got =
            (await this.client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok", [this.opts.schema, lockKeys.leader])).rows[0]
              ?.ok === true;
          if (got) this.set(true);
        } else {
          await this.client.query({ text: "SELECT 1", query_timeout: heartbeat * 2 } as pg.QueryConfig);
        }
      } catch (err) {
        this.opts.logger.warn({ err: (err as Error).message }, "leader election: database unavailable");
        this.set(false);
        await this.client?.end().catch(() => undefined);
        this.client = undefined;
        failures++;
      }
      const wait = this.client === undefined ? Math.min(30_000, retry * 2 ** Math.min(failures, 5)) : this.leader ? heartbeat : retry;
      await sleep(wait, undefined, { signal: this.abort.signal }).catch(() => undefined);
    }
  }

  /** A connection that listens for triggers before it tries the lock. */
  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.opts.url,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
      application_name: `gatesync ${this.replica}`,
    });
    client.on("error", (err) => {
      if (this.client !== client) return;
      this.opts.logger.warn(
        { err: err.message, leader: this.leader },
        "leader election connection lost: reconnecting (leadership and forwarded triggers wait for it)",
      );
      this.set(false);
      this.client = undefined;
      client.end().catch(() => undefined);
    });
    client.on("notification", (n) => this.heard(n.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${triggerChannel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.connections++;
    this.opts.logger.info({ reconnected: this.connections > 1, channel: triggerChannel }, "leader election connected; listening for triggers from standbys");
    return client;
  }

  /** A message on the trigger channel: the leader acts on triggers; a standby waits for acks. */
  private heard(payload: string | undefined): void {
    const m = decodeMessage(payload, this.opts.schema);
    if (m === undefined) return;
    if (m.kind === "ack") {
      this.acks.acknowledge(m.nonce, m.from);
      return;
    }
    if (!this.leader || this.client === undefined) return;
    this.opts.logger.info({ reason: m.reason, from: m.from }, "trigger received from a standby");
    this.opts.onTrigger?.(m.reason, m.from, m.traceparent);
    this.notify({ kind: "ack", schema: this.opts.schema, nonce: m.nonce, from: this.replica }).catch((err: unknown) => {
      this.opts.logger.warn({ err: (err as Error).message }, "could not acknowledge a forwarded trigger");
    });
  }

  private async notify(m: RelayMessage): Promise<void> {
    if (this.client === undefined) throw new Error("no database connection");
    await this.client.query("SELECT pg_notify($1, $2)", [triggerChannel, encodeMessage(m)]);
  }

  /**
   * Carries a trigger this standby received to the leader; ok once the leader acknowledged it.
   * Not ok when no leader acknowledged within the timeout or the database is unreachable.
   */
  async forward(reason: ForwardedReason, traceparent?: string): Promise<ForwardResult> {
    if (this.client === undefined) return { ok: false, why: "this replica has no database connection" };
    const t0 = performance.now();
    const timeout = this.opts.ackTimeoutMs ?? 2_000;
    const { nonce, acked } = this.acks.expect(timeout);
    try {
      await this.notify({
        kind: "trigger",
        schema: this.opts.schema,
        reason,
        nonce,
        from: this.replica,
        ...(traceparent === undefined ? {} : { traceparent }),
      });
    } catch (err) {
      this.acks.acknowledge(nonce, "");
      return { ok: false, why: `the trigger could not be sent to the leader (${(err as Error).message})` };
    }
    const leader = await acked;
    if (leader === undefined || leader === "")
      return { ok: false, why: `no leader acknowledged it within ${timeout} ms (none elected yet, or it is reconnecting)` };
    return { ok: true, leader, ms: Math.round(performance.now() - t0) };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop;
    if (this.client !== undefined) {
      await this.client.query("SELECT pg_advisory_unlock(hashtext($1), $2)", [this.opts.schema, lockKeys.leader]).catch(() => undefined);
      await this.client.end().catch(() => undefined);
      this.client = undefined;
    }
    this.set(false);
  }
}
