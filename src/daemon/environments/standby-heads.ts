/**
 * How a replica follows the environments it does not lead: every `intervalMs` (1 s), ONE
 * statement per database reads the head of every such environment — its newest run row's place
 * (seq, repeats) and its state's version (lineage, serial) — instead of one history read and one
 * version read per environment. An environment's rows are read again only when its head moved;
 * its /status, pages and metrics are served from what the heads said meanwhile (run-history.ts
 * `followHead`, cached-state.ts `noteVersion`). Who leads each environment is the leases' own
 * one read of the lease table per renewal (lease-table.ts `holders`). So a standby's queries per
 * interval do not grow with the environments it follows.
 *
 * A heads read that fails (a schema not created yet, the database away) is logged at debug and
 * changes nothing: what the heads said lapses after two intervals, and the environments' own
 * reads take over until the next read succeeds.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import type { Logger } from "../../logger.js";
import { postgresConnection } from "../../record/open-backend.js";
import { openSharedPool, pgModule } from "../../record/postgres/shared-pool.js";
import type { SharedPool } from "../../record/postgres/shared-pool.js";
import type { StateVersion } from "../../record/state.js";
import type { EnvironmentUnit } from "./environment-unit.js";

/** The newest run row's place, undefined when the environment has no run row. */
export interface RunHead {
  readonly seq: number;
  readonly repeats: number;
}

export interface EnvironmentHead {
  readonly environment: string;
  readonly version: StateVersion;
  readonly run: RunHead | undefined;
}

/** One environment a standby may follow. */
export interface FollowedEnvironment {
  readonly name: string;
  /** The schema of its PostgreSQL state (a plain identifier, checked by the state backend). */
  readonly schema: string;
  /** Whether this replica leads it now (then it is not followed: its own runs write its rows). */
  readonly leads: () => boolean;
  /** Told its head, read with the others'; `validMs`: how long it stands for a read of its own. Settles once its rows are read again, if they moved. */
  readonly onHead: (head: EnvironmentHead, validMs: number) => Promise<void>;
}

/** One database's followed environments and the shared pool they read through. */
export interface FollowedDatabase {
  readonly pool: SharedPool;
  readonly environments: readonly FollowedEnvironment[];
}

/** The one statement reading every listed environment's head (one UNION ALL branch each; $n its name). */
export function headsStatement(environments: readonly Pick<FollowedEnvironment, "name" | "schema">[]): { text: string; values: string[] } {
  const esc = pgModule().escapeIdentifier;
  const text = environments
    .map((e, i) => {
      const s = esc(e.schema);
      return `SELECT $${i + 1}::text AS environment, m.lineage, m.serial, h.seq, h.repeats FROM ${s}.meta m LEFT JOIN LATERAL (SELECT seq, repeats FROM ${s}.history WHERE kind = 'run' ORDER BY seq DESC LIMIT 1) h ON true`;
    })
    .join("\nUNION ALL\n");
  return { text, values: environments.map((e) => e.name) };
}

interface HeadRow {
  environment: string;
  lineage: string;
  serial: string;
  seq: string | null;
  repeats: number | null;
}

/** Reads the heads of `environments` in one statement on `client`. */
export async function readHeads(client: Pick<pg.ClientBase, "query">, environments: readonly FollowedEnvironment[]): Promise<EnvironmentHead[]> {
  if (environments.length === 0) return [];
  const rows = (await client.query<HeadRow>(headsStatement(environments))).rows;
  return rows.map((r) => ({
    environment: r.environment,
    version: { lineage: r.lineage, serial: Number(r.serial) },
    run: r.seq === null ? undefined : { seq: Number(r.seq), repeats: r.repeats ?? 0 },
  }));
}

export class StandbyHeads {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly wake = new AbortController();

  constructor(
    private readonly databases: readonly FollowedDatabase[],
    private readonly logger: Logger,
    readonly intervalMs = 1_000,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.round();
      await sleep(this.intervalMs, undefined, { signal: this.wake.signal }).catch(() => undefined);
    }
  }

  /** One round: per database, one statement for every environment not led here. */
  async round(): Promise<void> {
    for (const db of this.databases) {
      const followed = db.environments.filter((e) => !e.leads());
      if (followed.length === 0) continue;
      try {
        const heads = await db.pool.with("standby heads", "read the followed environments' heads", (c) => readHeads(c, followed));
        const byName = new Map(followed.map((e) => [e.name, e]));
        // the rows of the environments whose head moved are read, one after another (one connection), before the next round
        for (const h of heads) await byName.get(h.environment)?.onHead(h, 2 * this.intervalMs);
      } catch (err) {
        this.logger.debug({ err: (err as Error).message, environments: followed.length }, "standby heads not read: the environments read their own");
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake.abort();
    await this.loop;
    for (const db of this.databases) await db.pool.close();
  }
}

/** The daemon's follower: its environments on PostgreSQL, grouped by database (none: undefined). */
export function standbyHeadsOf(
  units: readonly EnvironmentUnit[],
  parts: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly logger: Logger;
    readonly applicationName?: string;
    readonly leads: (name: string) => boolean;
  },
): StandbyHeads | undefined {
  const byUrl = new Map<string, { pool: SharedPool; environments: FollowedEnvironment[] }>();
  for (const u of units) {
    const state = u.config.state;
    if (state.backend !== "postgres") continue;
    const connection = postgresConnection(u.config, parts.env);
    let db = byUrl.get(connection.url);
    if (db === undefined) {
      // the state's own shared pool (same URL and application_name): no connection of its own
      db = { pool: openSharedPool({ url: connection.url, applicationName: parts.applicationName, settings: connection.pool }), environments: [] };
      byUrl.set(connection.url, db);
    }
    db.environments.push({
      name: u.name,
      schema: state.schema,
      leads: () => parts.leads(u.name),
      onHead: (head, validMs) => {
        u.snapshots.noteVersion(head.version, validMs);
        return u.history.followHead(head.run, validMs);
      },
    });
  }
  if (byUrl.size === 0) return undefined;
  return new StandbyHeads([...byUrl.values()], parts.logger.child({ component: "fleet" }));
}
