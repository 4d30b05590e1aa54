/**
 * The ownership registry (docs/user/teams.md): for each target — an interface at a URL — and
 * each object on it (the kind's identity: `org-key:acme`, `api:…`, `oauth-client:API/CLIENT`, a
 * product's name …, KindModule.objectKeys), exactly one owner and the environment it is managed
 * from. It is the operator's: written by applies that claim what they write and by `gatesync
 * ownership release|transfer`, never by a repository. Kept beside the states: a SQLite file in
 * the states' directory, or a table of the state's PostgreSQL database. An apply's claim is
 * written in the same transaction as the record that claims it (StateBackend.writeClaiming: the
 * state's own connection in PostgreSQL, the registry's file attached to the state's in SQLite),
 * so a claim never stands without its record, nor a claimed record without its claim.
 */

/** An interface at a URL: where an object lives. */
export interface OwnershipTarget {
  readonly interface: string;
  readonly url: string;
}

/** Who claims: an owner (a team's name) and the environment it manages the object from. */
export interface Claimant {
  readonly owner: string;
  readonly environment: string;
}

/** One object on one target. */
export interface OwnershipKey extends OwnershipTarget {
  /** The object's identity (KindModule.objectKeys: the address key, else the content key). */
  readonly object: string;
}

/** A claim an apply makes: the object, and what it is as its resource names it. */
export interface OwnershipClaim extends OwnershipKey, Claimant {
  /** `OrgKey/acme`: the claimant's resource. */
  readonly resource: string;
}

/** A row of the registry. */
export interface OwnershipRow extends OwnershipClaim {
  readonly claimedAt: string;
}

export interface OwnershipRegistry {
  /** Where it lives, for messages. */
  readonly description: string;
  /** The rows of these targets (a row of any other target is never read by a run). */
  rowsOf(targets: readonly OwnershipTarget[]): Promise<OwnershipRow[]>;
  /**
   * The rows of exactly these objects: what a run reads (its declared and recorded objects, the
   * APIs they reference), so that its cost is its own objects', never the registry's size.
   */
  rowsAt(keys: readonly OwnershipKey[]): Promise<OwnershipRow[]>;
  /** Whether a claimant other than `me` holds an object of `kind` (`api`: the part before the colon) on the target: one row at most is read. */
  othersHold(target: OwnershipTarget, kind: string, me: Claimant): Promise<boolean>;
  /** Every row. */
  all(): Promise<OwnershipRow[]>;
  /**
   * Writes each claim whose object has no owner yet, in one transaction, and answers the rows of
   * every claimed object as they stand after it: a claim that lost to another claimant's finds
   * that claimant's row.
   */
  claim(claims: readonly OwnershipClaim[], now: string): Promise<OwnershipRow[]>;
  /** Removes an object's row; answers the removed row. */
  release(key: OwnershipKey): Promise<OwnershipRow | undefined>;
  /** Gives an object's row to another claimant; answers the row before the change. */
  transfer(key: OwnershipKey, to: Claimant, now: string): Promise<OwnershipRow | undefined>;
  close(): Promise<void>;
}

/** The key of an object in maps: interface, URL and identity. */
export const keyOf = (k: OwnershipKey): string => `${k.interface} ${k.url} ${k.object}`;

/** A URL as the registry compares it: without a trailing slash. */
export const registryUrl = (url: string): string => url.replace(/\/+$/, "");

const ownerPattern = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** Whether a name can be an owner's (the schema's `owner` pattern: a team's short name). */
export const isOwnerName = (name: string): boolean => ownerPattern.test(name);

/** A row read from storage as a row, or why it is not one (a row without its fields is ignored with a note). */
export function rowOf(raw: Readonly<Record<string, unknown>>): OwnershipRow | string {
  const fields = ["interface", "url", "object", "owner", "environment", "resource", "claimed_at"] as const;
  for (const f of fields) if (typeof raw[f] !== "string" || raw[f] === "") return `a row without ${f} (${JSON.stringify(raw.object ?? "?")}) is ignored`;
  const s = raw as Readonly<Record<(typeof fields)[number], string>>;
  return { interface: s.interface, url: s.url, object: s.object, owner: s.owner, environment: s.environment, resource: s.resource, claimedAt: s.claimed_at };
}
