/**
 * References of a scheme gatesync does not know, in a resource's spec or an attached document:
 * a located REFERENCE_UNKNOWN error each, naming the known schemes and the one it was likely
 * meant to be. Before, such a reference (`${evn:TOKEN}`, `${vault:app#secret}`) was sent
 * to the gateway as written: a typo became a key's HMAC secret (issue 43).
 */
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import type { PathSegment } from "../../text/field-path.js";
import { formatPath } from "../../text/field-path.js";
import { formatMatch, knownSchemes, someString, unknownReferences, walkStrings } from "../../secrets/references.js";
import type { ReferenceMatch } from "../../secrets/references.js";
import { similar } from "../../text/similar.js";
import type { Locate, Place } from "../findings.js";

const knownList = knownSchemes.map((s) => `\`${s}\``).join(", ");

/** The hint of one unknown reference: the known scheme it resembles, else how to write it. */
function hintFor(m: ReferenceMatch): string {
  const literal = `or write \`$${formatMatch(m)}\` for the text itself`;
  const meant = knownSchemes.find((s) => similar(m.scheme, s));
  if (meant !== undefined) return `did you mean \`${formatMatch({ scheme: meant, name: m.name })}\`? (${literal})`;
  return `write \${env:NAME}, \${file:PATH}, \${sops:PATH#KEY.PATH} or \${var:NAME}, ${literal}`;
}

/** A REFERENCE_UNKNOWN error for each reference of an unknown scheme in `value`, located at its string. */
export function unknownReferenceFindings(value: unknown, base: readonly PathSegment[], place: Place, locate: Locate): Diagnostic[] {
  // nearly every document holds none: found without making a path for each of its strings
  if (!someString(value, (s) => s.includes("${") && unknownReferences(s).length > 0)) return [];
  const out: Diagnostic[] = [];
  walkStrings(value, (s, p) => {
    if (!s.includes("${")) return;
    for (const m of unknownReferences(s)) {
      const path = [...(place.base ?? []), ...base, ...p];
      out.push({
        severity: "error",
        code: ErrorCode.REFERENCE_UNKNOWN,
        file: place.file,
        ...(place.resource === undefined ? {} : { resource: place.resource }),
        path: formatPath(path),
        ...locate(place.file, place.index, path),
        message: `\`${formatMatch(m)}\` is a reference of the unknown scheme \`${m.scheme}\` (gatesync reads ${knownList}): it would be sent as this text`,
        hint: hintFor(m),
      });
    }
  });
  return out;
}
