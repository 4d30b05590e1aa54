/**
 * gatesync's own credentials: the variables that hold them and the files the config itself
 * uses (which settings of gatesync.yaml name them is `config/credentials.ts`). Their values are
 * registered with the redaction layer when read, and resources may never reference them (see
 * scope.ts).
 */
import { registerSecret } from "./redaction.js";

/** The variable that holds the key of the keyed hashes (see hash-key.ts). */
export const hashKeyVariable = "GATESYNC_HASH_KEY";

/** The variable `gatesync plan --state-url` reads its bearer token from. */
export const stateTokenVariable = "GATESYNC_STATE_TOKEN";
/** The variable `gatesync promote` and `gatesync rollback` read the promotion token from when gatesync.yaml names none (`server.promoteTokenEnv`). */
export const promoteTokenVariable = "GATESYNC_PROMOTE_TOKEN";

export interface CredentialVariable {
  readonly name: string;
  /** The setting of gatesync.yaml that names it. */
  readonly setting: string;
  /** How else the value travels, so that its other forms are scrubbed too: a connection string's password (only that: connectionSecrets), a git token's basic credential. */
  readonly form?: "url" | "git-token";
}

export interface CredentialFile {
  readonly path: string;
  readonly setting: string;
  /** `file`: this file; `prefix`: this file and its siblings named after it (journal, backups); `tree`: everything below. */
  readonly match: "file" | "prefix" | "tree";
}

/** `scheme://user[:password]@` anywhere in a text (git quotes URLs in its own forms). */
const urlUserInfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"`<>]+@/gi;

/** The text with the user information of every URL in it removed, whatever the configured URL looked like. */
export function stripUrlCredentials(text: string): string {
  return text.replace(urlUserInfo, "$1");
}

/** The parts of a URL's user information (decoded and as written), when it has any. */
export function urlCredentials(url: string): string[] {
  try {
    const u = new URL(url);
    return [u.username, u.password, decodeURIComponent(u.username), decodeURIComponent(u.password)].filter((s) => s !== "");
  } catch {
    return [];
  }
}

/**
 * What of a connection string (`state.urlEnv`) is secret: its password — in the user information
 * or a `password` parameter, decoded and as written — and then the whole string. Not its role
 * name: scrubbed, the user `postgres` blanked every message naming the state (`[redacted] schema
 * gatesync`). A string that is not a URL (`host=… password=…`) is secret whole.
 */
export function connectionSecrets(value: string): string[] {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return [value];
  }
  const passwords = [u.password, decodeURIComponent(u.password), ...u.searchParams.getAll("password")].filter((p) => p !== "");
  return passwords.length === 0 ? [] : [value, ...passwords];
}

/** The HTTP basic credential a git token is sent as (a server may echo it). */
export function gitTokenHeader(token: string): string {
  return Buffer.from(`gatesync:${token}`).toString("base64");
}

/**
 * Registers the values of credential variables with the redaction layer (in every form they
 * travel in), and the user information of `urls`. Returns the variables whose value is too
 * short to be scrubbed.
 */
export function registerCredentialValues(
  variables: readonly CredentialVariable[],
  env: Readonly<Record<string, string | undefined>>,
  urls: readonly string[] = [],
): string[] {
  const short: string[] = [];
  for (const v of variables) {
    const value = env[v.name];
    if (value === undefined || value === "") continue;
    if (v.form === "url") {
      const secrets = connectionSecrets(value);
      if (secrets.map((secret) => registerSecret(secret)).includes(false)) short.push(v.name);
      continue;
    }
    if (!registerSecret(value)) short.push(v.name);
    if (v.form === "git-token") registerSecret(gitTokenHeader(value));
  }
  for (const url of urls) urlCredentials(url).forEach(registerSecret);
  return short;
}
