/**
 * Unwrapping SOPS data keys with age, by the `age-encryption` package, for identities other than
 * X25519 ones (those age-x25519.ts unwraps with node:crypto): its API is asynchronous, so a run's
 * keys are unwrapped here before its lookups where the run can wait (validation's prefetch), and
 * in the age thread (sops-age-worker.ts) for a lookup that finds its key not unwrapped.
 */
import { armor, Decrypter } from "age-encryption";

export interface UnwrapRequest {
  /** Per file, the armored `enc` of each of its age stanzas: one request for every file a run needs at once. */
  readonly files: ReadonlyArray<readonly string[]>;
  readonly identities: readonly string[];
}

/** The data key, or why none of the stanzas opened (never a key's text). */
export type UnwrapAnswer = { readonly ok: true; readonly key: Uint8Array } | { readonly ok: false; readonly reason: "no-match" | "bad-identity" | "malformed" };

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
export async function unwrapAll(request: UnwrapRequest): Promise<UnwrapAnswer[]> {
  const decrypter = decrypterOf(request.identities);
  if (decrypter === undefined) return request.files.map(() => ({ ok: false, reason: "bad-identity" }));
  // eslint-disable-next-line no-restricted-syntax -- bounded by the SOPS files one run references (no remote call: local X25519 and ChaCha20)
  return Promise.all(request.files.map((stanzas) => unwrap(decrypter, stanzas)));
}
