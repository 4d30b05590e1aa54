/**
 * Leader election among replicas of `gatesync run`: a PostgreSQL session advisory lock held
 * on a dedicated connection. Only the holder applies. A heartbeat checks the connection every
 * `heartbeatMs`; when it fails, leadership is given up at once (and the caller stops starting
 * calls). Standbys try again every `retryMs`, so a replica takes over within seconds of the
 * leader's connection dropping (process killed, network cut).
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { Logger } from "../logger.js";
import { lockKeys } from "./postgres-backend.js";

export interface LeaderOptions {
  readonly url: string;
  readonly schema: string;
  readonly logger: Logger;
  readonly retryMs?: number;
  readonly heartbeatMs?: number;
  /** Told of every change of leadership. */
  readonly onChange?: (leader: boolean) => void;
}

export class LeaderElector {
  private leader = false;
  private client: pg.Client | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly opts: LeaderOptions) {}

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
          const client = new pg.Client({ connectionString: this.opts.url, connectionTimeoutMillis: 5_000, keepAlive: true });
          client.on("error", () => {
            this.set(false);
            this.client = undefined;
          });
          await client.connect();
          this.client = client;
          failures = 0;
        }
        if (!this.leader) {
          const got = (await this.client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok", [this.opts.schema, lockKeys.leader])).rows[0]?.ok === true;
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
