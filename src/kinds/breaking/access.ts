/**
 * Changes of an OrgKey or an OAuthClient that take access away from whoever holds the key or
 * the client's tokens: an API dropped from `access_rights`, fewer allowed URLs or methods, a
 * lower rate or quota, a deactivated or earlier-expiring key, a removed policy; a changed
 * `policy_id` of an OAuth client (the gateway revokes every token issued to the client).
 */
import { isDeepStrictEqual } from "node:util";
import { isSensitiveMarker } from "../../secrets/markers.js";
import type { ClassifiedChange, Spec } from "./types.js";
import { annotation, breaking, field, isRecord, nonBreaking } from "./types.js";

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const apiOf = (rights: unknown, label: string): string => {
  const id = field(rights, "api_id");
  return typeof id === "string" && id !== "" ? id : label;
};
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** rate per `per` seconds; a rate below 1 or no `per` counts as no limit. */
function limits(base: string, before: unknown, after: unknown): ClassifiedChange[] {
  const out: ClassifiedChange[] = [];
  const rate = (v: unknown): number | undefined => {
    const r = num(field(v, "rate"));
    const p = num(field(v, "per"));
    return r !== undefined && r > 0 && p !== undefined && p > 0 ? r / p : undefined;
  };
  const [rb, ra] = [rate(before), rate(after)];
  const shownRate = (v: unknown): string => `${String(field(v, "rate"))} per ${String(field(v, "per"))} s`;
  if (ra !== undefined && (rb === undefined || ra < rb)) {
    out.push(
      breaking(
        `${base}rate`,
        rb === undefined
          ? `a rate limit is set (${shownRate(after)}): callers above it get 429`
          : `the rate limit is lowered from ${shownRate(before)} to ${shownRate(after)}: callers above it get 429`,
      ),
    );
  } else if (rb !== undefined && rb !== ra) {
    out.push(nonBreaking(`${base}rate`, "the rate limit is raised or lifted"));
  }
  // quota_max: -1 (or nothing) is unlimited
  const quota = (v: unknown): number | undefined => {
    const q = num(field(v, "quota_max"));
    return q === undefined || q < 0 ? undefined : q;
  };
  const [qb, qa] = [quota(before), quota(after)];
  if (qa !== undefined && (qb === undefined || qa < qb))
    out.push(breaking(`${base}quota_max`, qb === undefined ? `a quota of ${qa} requests is set` : `the quota is lowered from ${qb} to ${qa} requests`));
  else if (qb !== undefined && qa !== qb) out.push(nonBreaking(`${base}quota_max`, "the quota is raised or lifted"));
  const [pb, pa] = [num(field(before, "quota_renewal_rate")), num(field(after, "quota_renewal_rate"))];
  if (qa !== undefined && pb !== undefined && pa !== undefined && pa > pb)
    out.push(breaking(`${base}quota_renewal_rate`, `the quota renews less often: every ${pa} s instead of ${pb} s`));
  return out;
}

function allowedUrls(base: string, before: unknown, after: unknown): ClassifiedChange[] {
  const list = (v: unknown): Array<{ url: string; methods: string[] }> =>
    Array.isArray(v) ? v.filter(isRecord).map((e) => ({ url: String(e.url), methods: strings(e.methods) })) : [];
  const [b, a] = [list(before), list(after)];
  if (isDeepStrictEqual(b, a)) return [];
  if (a.length === 0) return [nonBreaking(`${base}allowed_urls`, "the URL restrictions are lifted")];
  if (b.length === 0) return [breaking(`${base}allowed_urls`, `URL restrictions are added: only ${a.map((e) => e.url).join(", ")} stay reachable`)];
  const lost = b.flatMap((e) => {
    const now = a.find((x) => x.url === e.url);
    if (now === undefined) return [`${e.url}`];
    const gone = e.methods.filter((m) => !now.methods.includes(m));
    return gone.length === 0 ? [] : [`${gone.join(", ")} on ${e.url}`];
  });
  return lost.length > 0
    ? [breaking(`${base}allowed_urls`, `no longer allowed: ${lost.join("; ")}`)]
    : [nonBreaking(`${base}allowed_urls`, "more URLs or methods are allowed")];
}

function accessRights(before: unknown, after: unknown): ClassifiedChange[] {
  const b = isRecord(before) ? before : {};
  const a = isRecord(after) ? after : {};
  const out: ClassifiedChange[] = [];
  for (const label of Object.keys(b).sort()) {
    const path = `access_rights.${label}`;
    const [rb, ra] = [b[label], a[label]];
    const api = apiOf(rb, label);
    if (ra === undefined) {
      out.push(breaking(path, `access to API ${api} is removed: calls to it with this key are refused`));
      continue;
    }
    if (field(ra, "api_id") !== field(rb, "api_id"))
      out.push(breaking(`${path}.api_id`, `access moves from API ${api} to API ${apiOf(ra, label)}: calls to ${api} are refused`));
    const versions = strings(field(rb, "versions")).filter((v) => !strings(field(ra, "versions")).includes(v));
    if (versions.length > 0) out.push(breaking(`${path}.versions`, `no longer allowed: version ${versions.join(", ")} of API ${api}`));
    out.push(...allowedUrls(`${path}.`, field(rb, "allowed_urls"), field(ra, "allowed_urls")));
    out.push(...limits(`${path}.limit.`, field(rb, "limit"), field(ra, "limit")));
  }
  for (const label of Object.keys(a).sort())
    if (b[label] === undefined) out.push(nonBreaking(`access_rights.${label}`, `access to API ${apiOf(a[label], label)} is added`));
  return out;
}

function switchedOn(before: Spec, after: Spec, key: string, reason: string): ClassifiedChange[] {
  return after[key] === true && before[key] !== true ? [breaking(key, reason)] : [];
}

export function classifyOrgKey(before: Spec, after: Spec): ClassifiedChange[] {
  const out = [...accessRights(before.access_rights, after.access_rights), ...limits("", before, after)];
  out.push(...switchedOn(before, after, "is_inactive", "the key is deactivated: every call with it is refused"));
  out.push(...switchedOn(before, after, "hmac_enabled", "HMAC signing is switched on: unsigned requests are refused"));
  out.push(...switchedOn(before, after, "enable_http_signature_validation", "HTTP signature validation is switched on: unsigned requests are refused"));
  const never = (v: unknown): boolean => num(v) === undefined || (num(v) ?? 0) <= 0;
  const [eb, ea] = [before.expires, after.expires];
  if (!never(ea) && (never(eb) || (num(ea) ?? 0) < (num(eb) ?? 0)))
    out.push(breaking("expires", `the key expires ${never(eb) ? "from now on" : "earlier"}: at ${new Date((num(ea) ?? 0) * 1000).toISOString()}`));
  const policies = strings(before.apply_policies).filter((p) => !strings(after.apply_policies).includes(p));
  if (policies.length > 0) out.push(breaking("apply_policies", `policy ${policies.join(", ")} no longer applied: the access it grants is lost`));
  if (typeof before.apply_policy_id === "string" && before.apply_policy_id !== "" && before.apply_policy_id !== after.apply_policy_id)
    out.push(breaking("apply_policy_id", `policy ${before.apply_policy_id} no longer applied: the access it grants is lost`));
  return out;
}

export function classifyOAuthClient(before: Spec, after: Spec): ClassifiedChange[] {
  const out: ClassifiedChange[] = [];
  // a value that holds a secret is a marker: not empty, and shown only as (sensitive)
  const text = (v: unknown): string => (typeof v === "string" ? v : isSensitiveMarker(v) ? "(sensitive)" : "");
  const [pb, pa] = [text(before.policy_id), text(after.policy_id)];
  if (pb !== pa)
    out.push(
      pb === ""
        ? nonBreaking("policy_id", `policy ${pa} is set: tokens issued so far are kept`)
        : breaking("policy_id", `the policy changes from ${pb} to ${pa === "" ? "none" : pa}: the gateway revokes every token issued to the client`),
    );
  const [rb, ra] = [text(before.redirect_uri), text(after.redirect_uri)];
  if (rb !== ra)
    out.push(
      rb === ""
        ? nonBreaking("redirect_uri", "a redirect URI is set")
        : breaking("redirect_uri", `the redirect URI changes from ${rb} to ${ra === "" ? "none" : ra}: authorisation requests with the old one are refused`),
    );
  if (!isDeepStrictEqual(before.description, after.description)) out.push(annotation("description", "the description changed"));
  if (!isDeepStrictEqual(before.meta_data, after.meta_data)) out.push(nonBreaking("meta_data", "the client's metadata changed"));
  return out;
}
