/**
 * The thread that unwraps SOPS data keys with age (the `age-encryption` package, whose API is
 * asynchronous): secret lookups are synchronous (resolver.ts), so sops-age.ts waits for this
 * thread's answer on a shared flag (Atomics.wait) and takes it from the port at once.
 */
import { workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { armor, Decrypter } from "age-encryption";

export interface UnwrapRequest {
  /** Per file, the armored `enc` of each of its age stanzas: one request for every file a run needs at once. */
  readonly files: ReadonlyArray<readonly string[]>;
  readonly identities: readonly string[];
}

/** The data key, or why none of the stanzas opened (never a key's text). */
export type UnwrapAnswer = { readonly ok: true; readonly key: Uint8Array } | { readonly ok: false; readonly reason: "no-match" | "bad-identity" | "malformed" };

const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };

/** The decrypter of the last identities asked with (one run asks with the same ones for every file). */
let last: { readonly identities: string; readonly decrypter: Decrypter } | undefined;

function decrypterOf(identities: readonly string[]): Decrypter | undefined {
  const joined = identities.join("\n");
  if (last?.identities === joined) return last.decrypter;
  const decrypter = new Decrypter();
  try {
    for (const identity of identities) decrypter.addIdentity(identity);
  } catch {
    return undefined;
  }
  last = { identities: joined, decrypter };
  return decrypter;
}

async function unwrap(decrypter: Decrypter, stanzas: readonly string[]): Promise<UnwrapAnswer> {
  let malformed = false;
  for (const stanza of stanzas) {
    let file: Uint8Array;
    try {
      file = armor.decode(stanza);
    } catch {
      malformed = true;
      continue;
    }
    try {
      return { ok: true, key: await decrypter.decrypt(file) };
    } catch {
      // another stanza may be for one of the identities
    }
  }
  return { ok: false, reason: malformed ? "malformed" : "no-match" };
}

/** Each file's answer, in the request's order: the files' keys unwrapped side by side. */
async function unwrapAll(request: UnwrapRequest): Promise<UnwrapAnswer[]> {
  const decrypter = decrypterOf(request.identities);
  if (decrypter === undefined) return request.files.map(() => ({ ok: false, reason: "bad-identity" }));
  // eslint-disable-next-line no-restricted-syntax -- bounded by the SOPS files one run references (no remote call: local X25519 and ChaCha20)
  return Promise.all(request.files.map((stanzas) => unwrap(decrypter, stanzas)));
}

port.on("message", (request: UnwrapRequest) => {
  void unwrapAll(request).then((answer) => {
    port.postMessage(answer);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
});
