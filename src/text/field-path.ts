/** Where a value sits inside a document: the path segments, and their display form. */

export type PathSegment = string | number;

/** Dotted display form of a path: `spec.APIDetails[0].apiRef`. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
