/**
 * The daemon's ownership registry as a merge-request job reads it (docs/user/teams.md): the rows
 * of one environment's targets from its `GET …/ownership` (beside its `…/state`), with the state
 * token — read-only: a plan claims nothing, and the job needs no route to the daemon's database.
 * A daemon that cannot answer fails the plan (STATE_UNREACHABLE), never a plan without the check.
 */
import { StateError, ErrorCode } from "../../../errors.js";
import { isOwnerName, keyOf, rowOf } from "../../../record/ownership/ownership.js";
import type { Claimant, OwnershipKey, OwnershipRegistry, OwnershipRow, OwnershipTarget } from "../../../record/ownership/ownership.js";
import { parseJsonWithin } from "../../../text/json-depth.js";
import { daemonAddress } from "../../common/daemon-client.js";

/** Rows of flat fields: an answer nested deeper is not the daemon's (and a deep value would exhaust the stack of what prints it). */
const answerDepth = 8;

/** `…/environments/NAME/state` (or `/state`) → `…/environments/NAME/ownership` (`/ownership`). */
export function ownershipUrlOf(stateUrl: string): URL {
  const base = stateUrl.replace(/\/+$/, "").replace(/\/state$/, "");
  return daemonAddress(`${base}/ownership`, "--state-url");
}

/** The rows of an answer; a row that is not one is left out, as the registry's own reading leaves it out. */
function rowsOfAnswer(text: string, where: string): OwnershipRow[] {
  const body = parseJsonWithin(text, answerDepth);
  const rows = (body as { rows?: unknown } | undefined)?.rows;
  if (!Array.isArray(rows))
    throw new StateError(
      ErrorCode.STATE_UNREACHABLE,
      `cannot read the daemon's ownership registry from ${where}: the answer is not gatesync's …/ownership (a JSON object of rows, nested at most ${answerDepth} deep)`,
      {
        hint: "check that the address is the daemon's server (server.listen)",
      },
    );
  const out: OwnershipRow[] = [];
  for (const raw of rows) {
    const r = raw as Record<string, unknown> | null;
    const row = r === null || typeof r !== "object" ? "not an object" : rowOf({ ...r, claimed_at: r.claimedAt });
    if (typeof row !== "string" && isOwnerName(row.owner)) out.push(row);
  }
  return out;
}

export class DaemonOwnership implements OwnershipRegistry {
  readonly description: string;
  private readonly url: URL;
  private read: Promise<OwnershipRow[]> | undefined;

  /** `fetch`: the daemon's answer at a URL, read with the state token (plan-state.ts readFromDaemon). */
  constructor(
    stateUrl: string,
    private readonly fetch: (url: URL) => Promise<string>,
  ) {
    this.url = ownershipUrlOf(stateUrl);
    this.description = `the daemon's ownership registry at ${this.url.origin}${this.url.pathname}`;
  }

  private rows(): Promise<OwnershipRow[]> {
    this.read ??= this.fetch(this.url).then((text) => rowsOfAnswer(text, `${this.url.origin}${this.url.pathname}`));
    return this.read;
  }

  async rowsOf(targets: readonly OwnershipTarget[]): Promise<OwnershipRow[]> {
    const wanted = new Set(targets.map((t) => `${t.interface} ${t.url}`));
    return (await this.rows()).filter((r) => wanted.has(`${r.interface} ${r.url}`));
  }

  async rowsAt(keys: readonly OwnershipKey[]): Promise<OwnershipRow[]> {
    const wanted = new Set(keys.map(keyOf));
    return (await this.rows()).filter((r) => wanted.has(keyOf(r)));
  }

  async othersHold(target: OwnershipTarget, kind: string, me: Claimant): Promise<boolean> {
    return (await this.rows()).some(
      (r) =>
        r.interface === target.interface &&
        r.url === target.url &&
        r.object.startsWith(`${kind}:`) &&
        (r.owner !== me.owner || r.environment !== me.environment),
    );
  }

  all(): Promise<OwnershipRow[]> {
    return this.rows();
  }

  claim(): Promise<OwnershipRow[]> {
    return Promise.reject(readOnly());
  }

  release(): Promise<OwnershipRow | undefined> {
    return Promise.reject(readOnly());
  }

  transfer(): Promise<OwnershipRow | undefined> {
    return Promise.reject(readOnly());
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

const readOnly = (): StateError =>
  new StateError(ErrorCode.STATE_IO, "the daemon's ownership registry is read-only here: a plan claims nothing", {
    hint: "claims are written by the daemon's applies, hand-overs by `gatesync ownership` where the registry is",
  });
