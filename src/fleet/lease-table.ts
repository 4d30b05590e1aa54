/**
 * The lease table of a fleet: which replica leads which environment, until when, under which
 * fencing token. Every statement compares against PostgreSQL's clock (`now()`), never a
 * replica's, so replicas whose clocks disagree still agree on who holds what.
 *
 * - `fleet_replicas`: one row per live replica, its `seen_at` refreshed every tick: a replica
 *   not seen for a lease's time is gone, and its share goes to the others.
 * - `fleet_leases`: one row per environment. A lease is taken only when it is free (no holder)
 *   or expired, and taking it adds one to its `token`; a renewal names the holder and the token,
 *   so a replica whose lease was taken over renews nothing and learns it lost it, and a row the
 *   replica no longer holds here is never renewed by it again.
 */
import pg from "pg";
import { createSchema } from "../record/postgres/postgres-schema.js";

export interface LeaseRow {
  readonly environment: string;
  readonly token: number;
}

export interface HolderRow {
  readonly environment: string;
  readonly holder: string | null;
  readonly holderName: string | null;
  readonly token: number;
  readonly live: boolean;
  /** How long a live lease has left on the database's clock, in ms (when read by `holders`). */
  readonly remainingMs?: number;
}

/** The SQL of one fleet's tables in `schema` (a plain identifier, checked by the caller). */
export class LeaseTable {
  private readonly s: string;

  constructor(
    readonly schema: string,
    private readonly ttlMs: number,
  ) {
    this.s = pg.escapeIdentifier(schema);
  }

  /** Creates the tables (idempotent; under the schema's one DDL lock, with the state's migrations: createSchema) and a row per environment. */
  async prepare(client: pg.Client, environments: readonly string[]): Promise<void> {
    await client.query("BEGIN");
    try {
      await createSchema(client, this.schema, this.s);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.s}.fleet_replicas (
        id text PRIMARY KEY, name text NOT NULL, url text, started_at timestamptz NOT NULL DEFAULT now(), seen_at timestamptz NOT NULL DEFAULT now())`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.s}.fleet_leases (
        environment text PRIMARY KEY, holder text, holder_name text, token bigint NOT NULL DEFAULT 0,
        expires_at timestamptz NOT NULL DEFAULT '-infinity', acquired_at timestamptz)`);
      await client.query(`INSERT INTO ${this.s}.fleet_leases (environment) SELECT unnest($1::text[]) ON CONFLICT (environment) DO NOTHING`, [environments]);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

  private get ttl(): string {
    return `${this.ttlMs} milliseconds`;
  }

  /** This replica is alive; answers how many replicas are (itself included). */
  async heartbeat(client: pg.Client, id: string, name: string, url: string | undefined, timeoutMs: number): Promise<number> {
    const r = await client.query<{ live: string }>({
      text: `WITH me AS (
               INSERT INTO ${this.s}.fleet_replicas (id, name, url) VALUES ($1, $2, $3)
               ON CONFLICT (id) DO UPDATE SET seen_at = now(), url = EXCLUDED.url RETURNING id)
             SELECT 1 + count(*) AS live FROM ${this.s}.fleet_replicas WHERE seen_at > now() - $4::interval AND id <> (SELECT id FROM me)`,
      values: [id, name, url ?? null, this.ttl],
      query_timeout: timeoutMs,
    } as pg.QueryConfig);
    return Number(r.rows[0]?.live ?? 1);
  }

  /**
   * Extends the leases this replica holds here, each by its fencing token; answers those it still
   * holds. A row the table gives `id` that is not in `held` (a renewal or a take whose answer never
   * came) is never extended: it runs out, or releaseStray frees it.
   */
  async renew(client: pg.Client, id: string, held: readonly LeaseRow[], timeoutMs: number): Promise<LeaseRow[]> {
    if (held.length === 0) return [];
    const r = await client.query<{ environment: string; token: string }>({
      text: `UPDATE ${this.s}.fleet_leases l SET expires_at = now() + $2::interval
             FROM unnest($3::text[], $4::bigint[]) AS h(environment, token)
             WHERE l.environment = h.environment AND l.token = h.token AND l.holder = $1 AND l.expires_at > now()
             RETURNING l.environment, l.token`,
      values: [id, this.ttl, held.map((h) => h.environment), held.map((h) => h.token)],
      query_timeout: timeoutMs,
    } as pg.QueryConfig);
    return r.rows.map((x) => ({ environment: x.environment, token: Number(x.token) }));
  }

  /**
   * Gives back every row the table says `id` holds but this replica does not hold here (by
   * environment and token): what a statement of unknown outcome took or extended. Answers them.
   */
  async releaseStray(client: pg.Client, id: string, held: readonly LeaseRow[], timeoutMs: number): Promise<LeaseRow[]> {
    const r = await client.query<{ environment: string; token: string }>({
      text: `UPDATE ${this.s}.fleet_leases l SET holder = NULL, holder_name = NULL, expires_at = '-infinity'
             WHERE l.holder = $1 AND NOT EXISTS (
               SELECT 1 FROM unnest($2::text[], $3::bigint[]) AS h(environment, token) WHERE h.environment = l.environment AND h.token = l.token)
             RETURNING l.environment, l.token`,
      values: [id, held.map((h) => h.environment), held.map((h) => h.token)],
      query_timeout: timeoutMs,
    } as pg.QueryConfig);
    return r.rows.map((x) => ({ environment: x.environment, token: Number(x.token) }));
  }

  /** Takes `environment` when it is free or expired: its new token and the replica that held it before, or undefined. */
  async acquire(
    client: pg.Client,
    environment: string,
    me: { readonly id: string; readonly name: string },
    timeoutMs: number,
  ): Promise<{ readonly token: number; readonly previous: string | null } | undefined> {
    const r = await client.query<{ token: string; previous: string | null }>({
      // the previous holder as read before the update (a CTE read after it would see the row updated)
      text: `UPDATE ${this.s}.fleet_leases l SET holder = $2, holder_name = $3, token = l.token + 1, expires_at = now() + $4::interval, acquired_at = now()
             FROM (SELECT holder AS previous FROM ${this.s}.fleet_leases WHERE environment = $1) old
             WHERE l.environment = $1 AND (l.holder IS NULL OR l.expires_at <= now())
             RETURNING l.token, old.previous`,
      values: [environment, me.id, me.name, this.ttl],
      query_timeout: timeoutMs,
    } as pg.QueryConfig);
    const row = r.rows[0];
    return row === undefined ? undefined : { token: Number(row.token), previous: row.previous };
  }

  /** Gives a lease back (only the one of this token: a lease taken over meanwhile is not touched). */
  async release(client: pg.Client, environment: string, id: string, token: number): Promise<void> {
    await client.query(
      `UPDATE ${this.s}.fleet_leases SET holder = NULL, holder_name = NULL, expires_at = '-infinity' WHERE environment = $1 AND holder = $2 AND token = $3`,
      [environment, id, token],
    );
  }

  /** A replica stopping leaves the fleet at once: the others count it gone now, not a lease's time later. */
  async leave(client: pg.Client, id: string): Promise<void> {
    await client.query(`DELETE FROM ${this.s}.fleet_replicas WHERE id = $1`, [id]);
  }

  /**
   * Ends every session of a replica whose lease this one took over (its expired lease no longer
   * protects anything): a paused or partitioned process still holding a state lock on one of them
   * would keep the next leader from writing that environment's state. Sessions are named
   * `gatesync <id> …` (application_name).
   */
  async fenceOff(client: pg.Client, previous: string): Promise<number> {
    const r = await client.query<{ n: string }>(
      `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name LIKE $1 AND pid <> pg_backend_pid()`,
      [`gatesync ${previous} %`],
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  /** Who holds each environment (an expired lease has no live holder). */
  async holders(client: pg.Client | pg.Pool, environments: readonly string[], timeoutMs?: number): Promise<HolderRow[]> {
    const r = await client.query<{
      environment: string;
      holder: string | null;
      holder_name: string | null;
      token: string;
      live: boolean;
      remaining_ms: number;
    }>({
      text: `SELECT environment, holder, holder_name, token, (holder IS NOT NULL AND expires_at > now()) AS live,
                    CASE WHEN isfinite(expires_at) AND expires_at > now() THEN EXTRACT(EPOCH FROM (expires_at - now())) * 1000 ELSE 0 END::float8 AS remaining_ms
             FROM ${this.s}.fleet_leases WHERE environment = ANY($1::text[]) ORDER BY environment`,
      values: [environments],
      ...(timeoutMs === undefined ? {} : { query_timeout: timeoutMs }),
    } as pg.QueryConfig);
    return r.rows.map((x) => ({
      environment: x.environment,
      holder: x.holder,
      holderName: x.holder_name,
      token: Number(x.token),
      live: x.live,
      remainingMs: Number(x.remaining_ms),
    }));
  }
}

/** The application_name of a fleet replica's sessions: `gatesync <id> <name>`, within PostgreSQL's 63 bytes. */
export function fleetApplicationName(id: string, name: string): string {
  return `gatesync ${id} ${name}`.slice(0, 63);
}

/**
 * The table as last read, told what this replica has done since: a lease it gave back or lost
 * names no holder (it is being handed over), one it took since names it. Without this a replica
 * that just handed an environment over showed itself as that environment's leader while
 * standing by, until its next read.
 */
export function ownedSinceRead(
  rows: readonly HolderRow[],
  self: { readonly id: string; readonly name: string },
  token: (environment: string) => number | undefined,
): HolderRow[] {
  return rows.map((r) => {
    const held = token(r.environment);
    if (held !== undefined) return r.holder === self.id && r.live ? r : { ...r, holder: self.id, holderName: self.name, token: held, live: true };
    return r.holder === self.id ? { ...r, live: false } : r;
  });
}

/** The environments of `rows` nobody holds (free or expired), in random order: replicas starting together try different ones first. */
export function freeLeases(rows: readonly HolderRow[]): string[] {
  const out = rows.filter((r) => !r.live).map((r) => r.environment);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
