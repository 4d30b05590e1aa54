/**
 * The W3C trace context a trigger carries, as gatesync takes it from a client (a `/sync`
 * request, a webhook) or from another replica (a forwarded trigger): untrusted, so checked
 * before it is kept or sent on. A value of another form is dropped (the run is then a root of
 * its own); what is kept is at most 55 characters, whatever was sent.
 */

/** `version-traceid-parentid-flags`, lowercase hex; a later version may append fields after a `-`. */
const traceparentForm = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|$)/;

/** The longest header read at all: a trace context is 55 characters, a later version's a little more. */
const longestRead = 512;

/**
 * `value` when it is a W3C `traceparent` (version 00 exactly; a later version's first four
 * fields, as the recommendation says to read one), else undefined: not a string, too long, not
 * that form, version ff, or an all-zero trace or parent id (invalid by the recommendation).
 */
export function validTraceparent(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > longestRead) return undefined;
  const m = traceparentForm.exec(value);
  if (m === null) return undefined;
  const [kept, version, traceId, parentId] = [m[0].replace(/-$/, ""), m[1]!, m[2]!, m[3]!];
  if (version === "ff" || (version === "00" && value.length !== kept.length)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return kept;
}
