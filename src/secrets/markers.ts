/**
 * Sensitive values never travel past the edge where secrets are resolved: each is replaced by
 * a marker holding a keyed hash (HMAC-SHA256) of the value, so a rotated secret still shows
 * as changed while neither the plan, its renderings nor the state ever hold the value.
 */
import { descend, rewrite } from "../text/rewrite.js";
import { createHmac, createHash } from "node:crypto";
import { configure } from "safe-stable-stringify";
import { sealedMarkerHash } from "./sealed-values.js";
import type { Sealing } from "./sealed-values.js";

/** Canonical JSON: sorted keys, so equal values have equal text. */
export const canonicalJson = configure({ deterministic: true }) as (value: unknown, replacer?: (key: string, value: unknown) => unknown) => string;

export const sensitiveKey = "$sensitive";

export interface SensitiveMarker {
  readonly [sensitiveKey]: string;
}

export function isSensitiveMarker(value: unknown): value is SensitiveMarker {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    typeof (value as Record<string, unknown>)[sensitiveKey] === "string" &&
    Object.keys(value).length === 1
  );
}

export function keyedHash(key: string, value: unknown): string {
  if (typeof value !== "string") return hmacOf(key, canonicalJson(value));
  let known = recentHashes.get(key);
  if (known === undefined) {
    if (recentHashes.size >= recentKeysBound) recentHashes.clear();
    recentHashes.set(key, (known = new Map<string, string>()));
  }
  let hashed = known.get(value);
  if (hashed === undefined) {
    // a new key's or many values': begun again, never grown past the bound
    if (known.size >= recentHashesBound) known.clear();
    hashed = hmacOf(key, JSON.stringify(value));
    known.set(value, hashed);
  }
  return hashed;
}

function hmacOf(key: string, text: string): string {
  return createHmac("sha256", key).update(text).digest("hex").slice(0, 32);
}

/**
 * The keyed hashes of strings lately hashed, per key: a repository uses a few secrets in
 * thousands of places (the same token in every webhook's header), and an HMAC costs microseconds.
 * The strings (secret values among them) stay in this process's memory, never written anywhere,
 * while they are among the last 4,096 of their key — in a daemon, past the run that resolved them.
 */
const recentHashes = new Map<string, Map<string, string>>();
const recentHashesBound = 4096;
const recentKeysBound = 16;

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A value's marker; one holding SOPS values (`sealing`) also carries their fingerprints' hash (sealed-values.ts). */
export function marker(key: string, value: unknown, sealing?: Sealing): SensitiveMarker {
  if (sealing === undefined || sealing.size === 0) return { [sensitiveKey]: keyedHash(key, value) };
  const text = typeof value === "string" ? value : canonicalJson(value);
  const sealed = sealedMarkerHash(text, typeof value !== "string", sealing, (t) => (t === text ? keyedHash(key, value) : keyedHash(key, t)));
  return { [sensitiveKey]: sealed ?? keyedHash(key, value) };
}

const segmentRegexes = new Map<string, RegExp>();

/**
 * Does a pattern segment match a key: `*` any key, `/re/` (case-insensitive, no dots) the keys
 * it finds a match in (`header_map./auth|token/` — only credential-like headers), else exactly.
 */
function segmentMatches(seg: string, key: string): boolean {
  if (seg === "*") return true;
  if (seg.length > 2 && seg.startsWith("/") && seg.endsWith("/")) {
    let re = segmentRegexes.get(seg);
    if (re === undefined) segmentRegexes.set(seg, (re = new RegExp(seg.slice(1, -1), "i")));
    return re.test(key);
  }
  return seg === key;
}

/** A value recorded as a marker (when it counted as sensitive) that is the same as `value` under `key`. */
export function sameAsMarker(recorded: unknown, value: unknown, key: string): boolean {
  return isSensitiveMarker(recorded) && !isSensitiveMarker(value) && value !== undefined && recorded[sensitiveKey] === keyedHash(key, value);
}

const isSensitiveValue = (v: unknown): boolean => v !== undefined && v !== null && v !== "";

/** Applies one pattern by navigating to it; copies only the objects on the way. */
function markAt(value: unknown, segs: readonly string[], key: string, sealing: Sealing | undefined): unknown {
  if (segs.length === 0) return isSensitiveValue(value) ? marker(key, value, sealing) : value;
  if (value === null || typeof value !== "object" || isSensitiveMarker(value)) return value;
  const [head, ...rest] = segs as [string, ...string[]];
  if (Array.isArray(value)) {
    if (head !== "*" && !/^\d+$/.test(head)) return value;
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      if (head !== "*" && Number(head) !== i) return;
      const next = markAt(v, rest, key, sealing);
      if (next !== v) (out ??= [...(value as unknown[])])[i] = next;
    });
    return out ?? value;
  }
  const obj = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(obj).filter((x) => segmentMatches(head, x))) {
    const next = markAt(obj[k], rest, key, sealing);
    if (next !== obj[k]) (out ??= { ...obj })[k] = next;
  }
  return out ?? value;
}

/** Replaces strings holding a secret value; copies only what changes. */
function markStrings(value: unknown, key: string, secrets: ReadonlySet<string>, sealing: Sealing | undefined): unknown {
  return rewrite(value, (v) => {
    if (typeof v === "string") {
      for (const s of secrets) if (s !== "" && v.includes(s)) return marker(key, v, sealing);
      return v;
    }
    return v === null || typeof v !== "object" || isSensitiveMarker(v) ? v : descend;
  });
}

/** A pattern's segments, split once: the few patterns there are are applied to every resource. */
const patternSegments = new Map<string, readonly string[]>();
function segmentsOf(pattern: string): readonly string[] {
  let segs = patternSegments.get(pattern);
  if (segs === undefined) patternSegments.set(pattern, (segs = pattern.split(".")));
  return segs;
}

/**
 * Replaces sensitive values with markers: subtrees at `patterns` (dotted paths, a segment `*` or
 * a `/regex/`: segmentMatches), and any string holding one of the resolved `secrets`. Parts
 * without either are returned as they are, not copied. `sealing`: the SOPS values among the
 * secrets (sealed-values.ts).
 */
export function redact(value: unknown, key: string, patterns: readonly string[], secrets: ReadonlySet<string>, sealing?: Sealing): unknown {
  let out = value;
  for (const p of patterns) out = markAt(out, segmentsOf(p), key, sealing);
  return secrets.size === 0 ? out : markStrings(out, key, secrets, sealing);
}

/** True when a value holds a marker anywhere. */
export function containsSensitive(value: unknown): boolean {
  if (isSensitiveMarker(value)) return true;
  if (Array.isArray(value)) return value.some(containsSensitive);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsSensitive);
  return false;
}
