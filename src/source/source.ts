/** Where resources come from: a git repository or a local directory. */
import { stripUrlCredentials } from "../secrets/credentials.js";

export interface SourceSnapshot {
  /** Directory holding the resources. */
  readonly root: string;
  /** The repository root: nothing outside it is read. */
  readonly boundary: string;
  /** Identifies the content: a commit, or a fingerprint of a directory. */
  readonly revision: string;
  /** The commit, for git sources. */
  readonly commit?: string;
  /** The commit's author (name) and subject line, for git sources: repository text, bounded (record/history.ts). */
  readonly author?: string;
  readonly subject?: string;
  /** The tag the commit was chosen by (an environment tracking `{ tag: PATTERN }`): repository text, bounded (newest-tag.ts). */
  readonly tag?: string;
  /** Tags matching the pattern that are not semantic versions, passed over in version order (newest-tag.ts): repository text, bounded. */
  readonly skippedTags?: readonly string[];
  /**
   * Keeps this revision's files where `root` says until the returned function is called: a git
   * source checks each revision out in a directory of its own and removes one that is neither
   * the newest nor read any more. Take it in the turn the snapshot arrives in. Absent: the files
   * are a directory's own (a directory source).
   */
  readonly hold?: () => () => void;
}

/** What a fetch knows of why it was asked for. */
export interface FetchRequest {
  /** A push was announced (a signed webhook): the remote has most likely moved, so it is fetched at once instead of asked first. */
  readonly announced?: boolean;
}

export interface Source {
  /** Safe to log: never holds a credential. */
  readonly description: string;
  /** Brings the source up to date and says where its files are. */
  fetch(request?: FetchRequest): Promise<SourceSnapshot>;
  /** Calls `onChange` when the files change (sources that can watch). */
  watch?(onChange: () => void): void;
  /** A commit's files (a revision promoted to an environment: docs/user/promotion.md), fetched before; git sources only. */
  at?(commit: string): Promise<SourceSnapshot>;
  /** Commits in `to` that `from` lacks (git sources); undefined when it cannot tell. */
  commitsBetween?(from: string, to: string): Promise<number | undefined>;
  close(): Promise<void>;
}

/** A URL with any user or password removed, for logs and status. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username !== "" || u.password !== "") {
      u.username = "";
      u.password = "";
      return `${u.toString()} (credentials removed)`;
    }
    return url;
  } catch {
    // scp-like ssh address (git@host:path): nothing secret in it
    return stripUrlCredentials(url);
  }
}
