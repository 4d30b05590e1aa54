/**
 * SOPS values a plan could not decrypt (a merge request's plan job has no age identity), and how
 * such a plan still tells whether they changed: each SOPS value is also known by the fingerprint
 * of its `ENC[…]` text, which is public in the repository. A sensitive field holding one is
 * recorded as `HASH~sops:SEALED` — the keyed hash of the value and that of the field with each
 * SOPS value replaced by its fingerprint's placeholder — so a plan without the key compares the
 * second part with what was applied: the same means the encrypted value is the one applied (never
 * shown either way); another means it changed. The placeholder stands in for the value only in a
 * plan that sends nothing (`gatesync plan`): an apply needs the key.
 */

/** A resolved value → its placeholder (a placeholder → itself: a value not decrypted here). */
export type Sealing = ReadonlyMap<string, string>;

const placeholderStart = "«sops-not-decrypted:";

/** What stands in for a SOPS value a plan without keys could not decrypt. */
export const sealedPlaceholder = (fingerprint: string): string => `${placeholderStart}${fingerprint}»`;

/** Whether a resolved value is the placeholder of a value not decrypted here (never sent, never a secret). */
export const isSealedPlaceholder = (value: string): boolean => value.startsWith(placeholderStart) && value.endsWith("»");

const sealedSeparator = "~sops:";
/** The value part of a marker whose value was not decrypted. */
const notDecrypted = "not-decrypted";

/** The value of a field as compared without keys: every SOPS value in `text` replaced by its placeholder (longest first). */
function sealedText(text: string, sealing: Sealing, escape: (s: string) => string): { readonly text: string; readonly decrypted: boolean } | undefined {
  let out = text;
  let found = false;
  let decrypted = true;
  for (const [value, placeholder] of [...sealing].sort((a, b) => b[0].length - a[0].length)) {
    const shown = escape(value);
    if (shown === "" || !out.includes(shown)) continue;
    found = true;
    if (value === placeholder) decrypted = false;
    out = out.split(shown).join(escape(placeholder));
  }
  return found ? { text: out, decrypted } : undefined;
}

/**
 * A marker's hash for a field holding SOPS values (`text`, the field as text: a string, or a
 * value's canonical JSON with `json` set): `HASH~sops:SEALED`, or undefined when it holds none.
 */
export function sealedMarkerHash(text: string, json: boolean, sealing: Sealing | undefined, hashOf: (text: string) => string): string | undefined {
  if (sealing === undefined || sealing.size === 0) return undefined;
  const sealed = sealedText(text, sealing, json ? (s) => JSON.stringify(s).slice(1, -1) : (s) => s);
  if (sealed === undefined) return undefined;
  return `${sealed.decrypted ? hashOf(text) : notDecrypted}${sealedSeparator}${hashOf(sealed.text)}`;
}

/**
 * How a field not decrypted here (`after`, a marker's hash) compares with what was applied
 * (`before`): "unchanged" when its encrypted values are the ones applied, "changed" when not
 * (or the record predates fingerprints); undefined when `after` was decrypted.
 */
export function compareNotDecrypted(before: string | undefined, after: string): "unchanged" | "changed" | undefined {
  if (!after.startsWith(`${notDecrypted}${sealedSeparator}`)) return undefined;
  const sealedOf = (hash: string): string => hash.slice(hash.indexOf(sealedSeparator));
  return before?.includes(sealedSeparator) === true && sealedOf(before) === sealedOf(after) ? "unchanged" : "changed";
}

/** Whether a marker's hash is that of a field whose value was not decrypted here. */
export const isNotDecrypted = (hash: string): boolean => hash.startsWith(`${notDecrypted}${sealedSeparator}`);
