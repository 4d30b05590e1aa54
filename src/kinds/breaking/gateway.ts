/**
 * The gateway's own settings of an API — the patch's query flags and the document's
 * `x-gw-api-gateway` extension — classified for the API's traffic. A flag wins over the
 * extension; with at least one flag the gateway rebuilds its defaults from the document
 * (listen path `/`, upstream from `servers[0].url`), without any it keeps what it has.
 */
import { isDeepStrictEqual } from "node:util";
import { extensionKey } from "./openapi.js";
import type { ClassifiedChange, Spec } from "./types.js";
import { annotation, breaking, field, isRecord, nonBreaking } from "./types.js";

/** Go's strconv.ParseBool on the trimmed value; anything else is ignored by the gateway. */
function parseFlag(v: unknown): boolean | undefined {
  if (typeof v === "boolean") return v;
  if (typeof v !== "string") return undefined;
  const t = v.trim();
  if (["1", "t", "T", "TRUE", "true", "True"].includes(t)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(t)) return false;
  return undefined;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);

interface Side {
  readonly query: Spec;
  readonly doc: Spec;
  readonly ext: Spec;
  readonly rebuilt: boolean;
}

function side(spec: Spec): Side {
  const query = isRecord(spec.query) ? spec.query : {};
  const doc = isRecord(spec.definition) ? spec.definition : {};
  const ext = isRecord(doc[extensionKey]) ? (doc[extensionKey] as Spec) : {};
  return { query, doc, ext, rebuilt: Object.keys(query).length > 0 };
}

/** The value the gateway ends up with; undefined: it keeps whatever it has (not known here). */
function listenPath(s: Side): string | undefined {
  return text(s.query.listenPath) ?? text(field(s.ext, "server", "listenPath", "value")) ?? (s.rebuilt ? "/" : undefined);
}

function upstream(s: Side): string | undefined {
  const servers = s.doc.servers;
  const first = Array.isArray(servers) ? text(field(servers[0], "url")) : undefined;
  return text(s.query.upstreamURL) ?? text(field(s.ext, "upstream", "url")) ?? (s.rebuilt ? first : undefined);
}

/** Where the value comes from: the flag, the extension, or the defaults the flags make the gateway rebuild. */
function where(s: Side, flag: string, extPath: string[]): { path: string; note: string } {
  if (text(s.query[flag]) !== undefined) return { path: `query.${flag}`, note: "" };
  if (text(field(s.ext, ...extPath)) !== undefined) return { path: `definition.${extensionKey}.${extPath.join(".")}`, note: "" };
  return { path: "query", note: "the gateway's default once a query flag is given" };
}

function moved(name: string, at: { path: string; note: string }, before: string | undefined, after: string | undefined, effect: string): ClassifiedChange[] {
  if (after === undefined || before === after) return [];
  const notes = [at.note, before === undefined ? "the previous one is not recorded" : ""].filter((n) => n !== "").join("; ");
  const how = before === undefined ? `set to ${after}` : `changed from ${before} to ${after}`;
  return [breaking(at.path, `${name} ${how}${notes === "" ? "" : ` (${notes})`}: ${effect}`)];
}

interface Toggle {
  readonly flag?: string;
  readonly ext?: readonly string[];
  readonly name: string;
  /** What switching it on (or off, with `breaksWhen: false`) does to existing callers. */
  readonly effect: string;
  readonly breaksWhen: boolean;
}

const toggles: readonly Toggle[] = [
  {
    flag: "authentication",
    ext: ["server", "authentication", "enabled"],
    name: "authentication",
    breaksWhen: true,
    effect: "callers without valid credentials are refused (401/403)",
  },
  { flag: "allowList", name: "the allow-list", breaksWhen: true, effect: "only endpoints with an allow-list entry stay reachable; others answer 403" },
  { flag: "validateRequest", name: "request validation", breaksWhen: true, effect: "requests whose body does not match the document's schema are refused" },
  { flag: "mockResponse", name: "mock responses", breaksWhen: true, effect: "callers get the document's mock responses instead of the upstream's" },
  { ext: ["info", "state", "active"], name: "the API", breaksWhen: false, effect: "deactivated: every call is refused" },
];

function toggleValue(s: Side, t: Toggle): boolean | undefined {
  const fromFlag = t.flag === undefined ? undefined : parseFlag(s.query[t.flag]);
  return fromFlag ?? (t.ext === undefined ? undefined : parseFlag(field(s.ext, ...t.ext)));
}

function toggled(b: Side, a: Side, t: Toggle): ClassifiedChange[] {
  const raw = t.flag === undefined ? undefined : a.query[t.flag];
  if (t.flag !== undefined && raw !== undefined && parseFlag(raw) === undefined && !isDeepStrictEqual(raw, b.query[t.flag])) {
    return [
      {
        path: `query.${t.flag}`,
        class: "unclassified",
        reason: `${JSON.stringify(raw)} is not a boolean the gateway reads (1, t, true, 0, f, false…): it ignores the flag`,
      },
    ];
  }
  const before = toggleValue(b, t);
  const after = toggleValue(a, t);
  if (after === undefined || before === after) return [];
  const path = t.flag !== undefined && a.query[t.flag] !== undefined ? `query.${t.flag}` : `definition.${extensionKey}.${(t.ext ?? []).join(".")}`;
  const state = after ? "on" : "off";
  if (after === t.breaksWhen)
    return [
      breaking(
        path,
        `${t.name} ${t.breaksWhen ? "switched on" : "switched off"}${before === undefined ? " (its previous setting is not recorded)" : ""}: ${t.effect}`,
      ),
    ];
  return [nonBreaking(path, `${t.name} switched ${state}: existing callers keep working`)];
}

/** Extension and query paths the rules above cover; other changes there are listed as unclassified. */
const covered = [
  "query.listenPath",
  "query.upstreamURL",
  "query.customDomain",
  "query.authentication",
  "query.allowList",
  "query.validateRequest",
  "query.mockResponse",
  `definition.${extensionKey}.server.listenPath.value`,
  `definition.${extensionKey}.upstream.url`,
  `definition.${extensionKey}.server.authentication.enabled`,
  `definition.${extensionKey}.info.state.active`,
  `definition.${extensionKey}.server.listenPath.strip`,
];

/** Leaf values by dotted path (arrays count as leaves). */
function leaves(value: unknown, base: string, out = new Map<string, unknown>()): Map<string, unknown> {
  if (isRecord(value)) for (const [k, v] of Object.entries(value)) leaves(v, `${base}.${k}`, out);
  else if (value !== undefined) out.set(base, value);
  return out;
}

function rest(before: Spec, after: Spec): ClassifiedChange[] {
  const flat = (s: Spec): Map<string, unknown> => leaves(field(s, "definition", extensionKey), `definition.${extensionKey}`, leaves(s.query, "query"));
  const b = flat(before);
  const a = flat(after);
  return [...new Set([...b.keys(), ...a.keys()])]
    .sort()
    .filter((p) => !isDeepStrictEqual(b.get(p), a.get(p)) && !covered.includes(p))
    .map((p) =>
      p === `definition.${extensionKey}.info.name`
        ? annotation(p, "the API's display name changed")
        : { path: p, class: "unclassified" as const, reason: "a gateway setting gatesync does not classify changed: review it by hand" },
    );
}

/** Classifies an ApiDefinition's gateway settings: `before` and `after` are its compared specs. */
export function classifyGateway(before: Spec, after: Spec): ClassifiedChange[] {
  if (
    isDeepStrictEqual(before.query, after.query) &&
    isDeepStrictEqual(field(before, "definition", extensionKey), field(after, "definition", extensionKey)) &&
    isDeepStrictEqual(field(before, "definition", "servers"), field(after, "definition", "servers"))
  )
    return [];
  const b = side(before);
  const a = side(after);
  const strip = [field(b.ext, "server", "listenPath", "strip"), field(a.ext, "server", "listenPath", "strip")];
  return [
    ...moved("the listen path", where(a, "listenPath", ["server", "listenPath", "value"]), listenPath(b), listenPath(a), "callers of the old path get 404"),
    ...moved("the upstream", where(a, "upstreamURL", ["upstream", "url"]), upstream(b), upstream(a), "traffic goes to a different service"),
    ...moved(
      "the custom domain",
      { path: "query.customDomain", note: "" },
      text(b.query.customDomain),
      text(a.query.customDomain),
      "callers of the old domain are no longer served",
    ),
    ...(strip[1] !== undefined && strip[0] !== strip[1]
      ? [
          breaking(
            `definition.${extensionKey}.server.listenPath.strip`,
            `stripping the listen path switched ${strip[1] === true ? "on" : "off"}: the upstream receives different paths`,
          ),
        ]
      : []),
    ...toggles.flatMap((t) => toggled(b, a, t)),
    ...rest(before, after),
  ];
}
