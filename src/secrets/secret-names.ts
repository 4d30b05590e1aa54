/**
 * Whether a field's name says it holds a secret (`client_secret`, `hmac_string`, `apiKey`,
 * `db_password_unencrypted`, a header `X-Auth-Token`): what `validate` warns about when such a
 * field holds a literal in git instead of a reference or an encrypted value. The name's last
 * words decide, so `token_endpoint`, `secret_rotation_days` or `public_key` are no secrets.
 */

/** Words that make a name a secret's when the name ends with them (after a suffix like `_unencrypted`). */
const secretEnding = /(secret|token|passw(or)?d|pwd|passphrase|api[-_ ]?key|private[-_ ]?key|hmac([-_ ]?(string|key|secret))?|credentials?|authorization)$/i;

/** Suffixes that leave the name what it was: sops's `_unencrypted`, a `_value`, `_plain` or `_text`. */
const neutralSuffix = /[-_ ]?(unencrypted|value|plain|text|string)$/i;

/** Words before the ending that make it no secret: a public key, a token's URL or type. */
const notSecret = /(public|pub)[-_ ]?key$/i;

export function namesASecret(name: string): boolean {
  if (notSecret.test(name)) return false;
  if (secretEnding.test(name)) return true;
  const stripped = name.replace(neutralSuffix, "");
  return stripped !== name && stripped !== "" && !notSecret.test(stripped) && secretEnding.test(stripped);
}
