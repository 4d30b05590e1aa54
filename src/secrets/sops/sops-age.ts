/**
 * age identities the way SOPS users give them — `SOPS_AGE_KEY` (one or more
 * `AGE-SECRET-KEY-1…` lines) and `SOPS_AGE_KEY_FILE` (default ~/.config/sops/age/keys.txt) —
 * and the unwrapping of SOPS files' data keys with them: with X25519 identities on this thread,
 * synchronously, by node:crypto (age-x25519.ts); with any other identity type by the
 * `age-encryption` package (age-unwrap.ts), awaited before a run's lookups where the run can
 * wait, else in a thread of its own (sops-age-worker.ts) — its API is asynchronous, a secret
 * lookup is not.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import type { MessagePort, Worker } from "node:worker_threads";
import { startWorker } from "../../worker-module.js";
import { registerSecret } from "../redaction.js";
import type { UnwrapAnswer, UnwrapRequest } from "./age-unwrap.js";
import { unwrapX25519 } from "./age-x25519.js";
import { SopsProblem } from "./sops-format.js";
import type { AgeStanza } from "./sops-format.js";

/** Where an environment's age identities come from: the variable and the file SOPS itself reads, unless the scope names others. */
export interface AgeKeySettings {
  /** The variable holding identities. */
  readonly keyEnv: string | undefined;
  /** The variable naming a key file (SOPS_AGE_KEY_FILE; when it is unset, ~/.config/sops/age/keys.txt). */
  readonly keyFileEnv: string | undefined;
  /** A key file the scope names. */
  readonly keyFile: string | undefined;
}

export const defaultAgeKeys: AgeKeySettings = { keyEnv: "SOPS_AGE_KEY", keyFileEnv: "SOPS_AGE_KEY_FILE", keyFile: undefined };

/** The key file of `keys`: the one the scope names, else the one sops would read. */
function keyFileOf(env: Readonly<Record<string, string | undefined>>, keys: AgeKeySettings): string | undefined {
  if (keys.keyFile !== undefined || keys.keyFileEnv === undefined) return keys.keyFile;
  const named = env[keys.keyFileEnv];
  if (named !== undefined && named !== "") return named;
  return env.HOME === undefined ? undefined : path.join(env.HOME, ".config/sops/age/keys.txt");
}

const identityLines = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.startsWith("AGE-SECRET-KEY-"));

/** The identities of an environment (every one registered with the redaction layer); none when neither source gives one. */
export function ageIdentities(env: Readonly<Record<string, string | undefined>>, keys: AgeKeySettings = defaultAgeKeys): string[] {
  const found = identityLines(keys.keyEnv === undefined ? "" : (env[keys.keyEnv] ?? ""));
  const file = keyFileOf(env, keys);
  if (file !== undefined) {
    try {
      found.push(...identityLines(readFileSync(file, "utf8")));
    } catch {
      // no key file: the identities of the variable, if any, are all there is
    }
  }
  for (const identity of found) registerSecret(identity);
  return found;
}

/** Where `keys` look, said in a message (names only). */
export function ageKeySources(keys: AgeKeySettings = defaultAgeKeys): string {
  if (keys === defaultAgeKeys) return "SOPS_AGE_KEY, SOPS_AGE_KEY_FILE or ~/.config/sops/age/keys.txt";
  return [keys.keyEnv === undefined ? [] : [`the variable ${keys.keyEnv}`], keys.keyFile === undefined ? [] : [`the file ${keys.keyFile}`]].flat().join(" or ");
}

/** `Atomics.waitAsync` (Node 16+; ES2024 in TypeScript's libraries, past this project's target). */
interface AtomicsWaitAsync {
  waitAsync(array: Int32Array, index: number, value: number, timeout: number): { async: false; value: string } | { async: true; value: Promise<string> };
}

/** One thread for a run, started at the first file that needs it and not keeping the process alive. */
class AgeThread {
  readonly #flag = new Int32Array(new SharedArrayBuffer(4));
  readonly #port: MessagePort;
  readonly #worker: Worker;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#worker = startWorker(import.meta.url, "sops-age-worker", { workerData: { port: port2, flag: this.#flag }, transferList: [port2] });
    this.#worker.unref();
    // a thread that fails answers nothing: the wait below ends in its time limit, as an error of the file
    this.#worker.on("error", () => {
      if (thread === this) thread = undefined;
      if (awayThread === this) awayThread = undefined;
    });
    port1.unref();
  }

  unwrap(request: UnwrapRequest): UnwrapAnswer[] {
    Atomics.store(this.#flag, 0, 0);
    this.#port.postMessage(request);
    // the thread's first answer includes its start (tsx from sources): generous, yet never forever
    if (Atomics.wait(this.#flag, 0, 0, 60_000) === "timed-out") throw new SopsProblem("SOPS_WRONG_KEY", "the data key could not be unwrapped in time");
    return this.#answer(request);
  }

  /** The same, awaited: this thread's event loop runs while the age thread works. */
  async unwrapAsync(request: UnwrapRequest): Promise<UnwrapAnswer[]> {
    Atomics.store(this.#flag, 0, 0);
    this.#port.postMessage(request);
    const waited = (Atomics as unknown as AtomicsWaitAsync).waitAsync(this.#flag, 0, 0, 60_000);
    if ((waited.async ? await waited.value : waited.value) === "timed-out")
      throw new SopsProblem("SOPS_WRONG_KEY", "the data key could not be unwrapped in time");
    return this.#answer(request);
  }

  #answer(request: UnwrapRequest): UnwrapAnswer[] {
    const answer = receiveMessageOnPort(this.#port)?.message as UnwrapAnswer[] | undefined;
    if (answer?.length !== request.files.length) throw new SopsProblem("SOPS_WRONG_KEY", "the data key could not be unwrapped");
    return answer;
  }
}

let thread: AgeThread | undefined;

/** A file's age stanzas and the other key types it names: what unwrapping its data key reads. */
export interface WrappedKey {
  readonly stanzas: readonly AgeStanza[];
  readonly otherKeyTypes: readonly string[];
}

type Keys = Array<Buffer | SopsProblem>;

/** What to ask for the keys of `files` (those that can be asked at all), and the answers made of what is answered. */
function unwrapping(files: readonly WrappedKey[], identities: readonly string[], sources: string) {
  const answers: Array<Buffer | SopsProblem | undefined> = files.map((f) => unusable(f, identities, sources));
  const asked = files.flatMap((_, i) => (answers[i] === undefined ? [i] : []));
  const request: UnwrapRequest | undefined = asked.length === 0 ? undefined : { files: asked.map((i) => files[i]!.stanzas.map((s) => s.enc)), identities };
  return {
    request,
    settle: (got: readonly UnwrapAnswer[] | SopsProblem): Keys => {
      asked.forEach((i, k) => (answers[i] = got instanceof SopsProblem ? got : keyOf(got[k]!, files[i]!.stanzas)));
      return answers as Keys;
    },
  };
}

/**
 * The 32-byte data keys of files, each unwrapped with one of `identities` or a SopsProblem saying
 * why not: here, or (an identity type other than X25519) in one request to the age thread for
 * all of them, waited for (a lookup cannot await).
 */
export function unwrapDataKeys(files: readonly WrappedKey[], identities: readonly string[], sources: string): Keys {
  const { request, settle } = unwrapping(files, identities, sources);
  if (request === undefined) return settle([]);
  const here = unwrapX25519(request);
  if (here !== undefined) return settle(here);
  try {
    return settle((thread ??= new AgeThread()).unwrap(request));
  } catch (error) {
    if (!(error instanceof SopsProblem)) throw error;
    return settle(error);
  }
}

/**
 * The same, awaited in the age thread, whatever the identities' type: for a prefetch of more
 * work than `onLoopTrials`, which the daemon's event loop must not spend (its /healthz waits).
 */
export async function unwrapDataKeysAway(files: readonly WrappedKey[], identities: readonly string[], sources: string): Promise<Keys> {
  const { request, settle } = unwrapping(files, identities, sources);
  if (request === undefined) return settle([]);
  // a thread of its own, one request at a time (environments of a daemon prefetch side by side): the lookups' waits never take its answers
  const asked = awayQueue.then(async () => (awayThread ??= new AgeThread()).unwrapAsync(request));
  awayQueue = asked.catch(() => undefined);
  try {
    return settle(await asked);
  } catch (error) {
    if (!(error instanceof SopsProblem)) throw error;
    return settle(error);
  }
}

let awayThread: AgeThread | undefined;
let awayQueue: Promise<unknown> = Promise.resolve();

/** The same, awaited on this thread: a run that can wait before its lookups starts no age thread. */
export async function unwrapDataKeysHere(files: readonly WrappedKey[], identities: readonly string[], sources: string): Promise<Keys> {
  const { request, settle } = unwrapping(files, identities, sources);
  if (request === undefined) return settle([]);
  const here = unwrapX25519(request);
  if (here !== undefined) return settle(here);
  const { unwrapAll } = await import("./age-unwrap.js");
  return settle(await unwrapAll(request));
}

/** Why a file's key cannot be asked for at all (no age stanza, no identity); undefined when it can. */
function unusable(file: WrappedKey, identities: readonly string[], sources: string): SopsProblem | undefined {
  if (file.stanzas.length === 0) {
    const others = file.otherKeyTypes.length === 0 ? "no key" : file.otherKeyTypes.join(", ");
    return new SopsProblem("SOPS_KEY_UNSUPPORTED", `the file's data key is encrypted only for ${others}: gatesync decrypts SOPS files with age keys`);
  }
  if (identities.length === 0) return new SopsProblem("SOPS_NO_IDENTITY", `no age identity is given here (${sources})`);
  return undefined;
}

function keyOf(answer: UnwrapAnswer, stanzas: readonly AgeStanza[]): Buffer | SopsProblem {
  if (answer.ok && answer.key.length === 32) return Buffer.from(answer.key);
  const why =
    !answer.ok && answer.reason === "bad-identity"
      ? "an age identity given is not a valid AGE-SECRET-KEY-1… line"
      : !answer.ok && answer.reason === "malformed"
        ? "its age stanzas are not armored age files"
        : answer.ok
          ? "its data key is not 32 bytes"
          : `none of the age identities given is one of its recipients (${stanzas.map((s) => s.recipient).join(", ")})`;
  return new SopsProblem(!answer.ok && answer.reason !== "malformed" ? "SOPS_WRONG_KEY" : "SOPS_INVALID", `the file's data key cannot be unwrapped: ${why}`);
}
