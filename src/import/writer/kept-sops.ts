/**
 * `--merge --encrypt-to`: the SOPS file a previous import wrote, kept as it is when it already
 * holds the same values for the same recipients. A SOPS file is never the same bytes twice (a
 * fresh data key, fresh IVs), so the file is compared by what it means: decrypted with the age
 * identities of the environment (SOPS_AGE_KEY, SOPS_AGE_KEY_FILE — its MAC verified) and its
 * recipients read from its metadata. Without an identity, or a file that cannot be read, the
 * values cannot be compared: the file is written again (and the report says so).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { ageIdentities, ageKeySources, unwrapDataKeysHere } from "../../secrets/sops/sops-age.js";
import { SopsProblem } from "../../secrets/sops/sops-format.js";
import { decryptSopsFile, leavesOf, parseSopsFile } from "../../secrets/sops/sops-tree.js";

export type KeptSops = { readonly kept: true; readonly text: string } | { readonly kept: false; readonly why?: string };

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const x = [...new Set(a)].sort();
  const y = [...new Set(b)].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

/** The existing file's text when it decrypts to exactly `values` and is encrypted for exactly `recipients`. */
export async function keptSopsFile(
  file: string,
  values: Readonly<Record<string, string>>,
  recipients: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<KeptSops> {
  if (!existsSync(file)) return { kept: false };
  const text = await readFile(file, "utf8");
  try {
    const sops = parseSopsFile(text);
    if (
      !sameSet(
        sops.meta.age.map((s) => s.recipient),
        recipients,
      ) ||
      sops.meta.otherKeyTypes.length > 0
    )
      return { kept: false };
    const [key] = await unwrapDataKeysHere([{ stanzas: sops.meta.age, otherKeyTypes: sops.meta.otherKeyTypes }], ageIdentities(env), ageKeySources());
    if (key === undefined || key instanceof SopsProblem)
      return { kept: false, why: "its values cannot be decrypted here to compare them (no age identity of its recipients)" };
    const leaves = leavesOf(decryptSopsFile(sops, key));
    const same =
      leaves.length === Object.keys(values).length && leaves.every((l) => l.path.length === 1 && typeof l.leaf === "string" && values[l.path[0]!] === l.leaf);
    return same ? { kept: true, text } : { kept: false };
  } catch (err) {
    if (err instanceof SopsProblem) return { kept: false, why: `it cannot be read as a SOPS file (${err.code})` };
    throw err;
  }
}
