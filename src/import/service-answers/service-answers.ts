/**
 * A directory of the services' answers, saved by the operator with the `curl` lines of
 * docs/user/import.md, each file named for what it holds:
 *
 * | file | answer of |
 * |---|---|
 * | `products.json` | portal `GET /products` |
 * | `providers.json` | portal `GET /providers` (the products' API provider when it lists one: product-provider.ts) |
 * | `client-types-<provider id>.json` | portal `GET /oauth-providers/{id}/client-types` |
 * | `portal-webhooks.json` | portal `GET /webhooks` |
 * | `dashboard-webhooks.json` | dashboard `GET /api/hooks?p=-1` |
 * | `llm-settings.json` | LLM service `GET /llm-settings` |
 * | `oauth-clients-<api id>.json` | gateway `GET /gw/oauth/clients/{apiID}` |
 * | `org-key-<key id>.json` | gateway `GET /gw/org/keys/{keyID}` |
 *
 * gatesync itself never calls a read endpoint (the contract has none). A file of another shape
 * is a located error; a file of another name is reported and left.
 */
import { readdir } from "node:fs/promises";
import { InputProblem, readSourceFile } from "../bounded-input.js";
import type { InputLimits } from "../bounded-input.js";
import type { ImportedResource, Origin, SourceRead } from "../model.js";
import { errorEntry, isRecord, skipEntry } from "../model.js";
import { listIn } from "./answer-shapes.js";
import { clientType, portalWebhook, product } from "./portal-answers.js";
import { dashboardWebhook, llmSettings, oauthClient, orgKey } from "./other-answers.js";
import { productProviderOf, providerHint, providersFile } from "./product-provider.js";
import type { ProductProvider } from "./product-provider.js";

const source = "service-answers";

type Reader = (item: Record<string, unknown>, origin: Origin) => ImportedResource | string;

interface AnswerFile {
  readonly what: string;
  /** The members of the answer that hold its list (none: the answer is the list). */
  readonly members: readonly string[];
  readonly read: Reader;
}

/** What a file of this name holds, by its name; undefined for a name the directory should not hold. */
export function answerFileOf(name: string, productProvider?: number): AnswerFile | undefined {
  const provider = /^client-types-(\d+)\.json$/.exec(name);
  const api = /^oauth-clients-(.+)\.json$/.exec(name);
  const key = /^org-key-(.+)\.json$/.exec(name);
  if (name === "products.json") return { what: "the portal's products (GET /products)", members: [], read: (p, o) => product(p, o, productProvider) };
  if (provider !== null) return { what: "a provider's client types", members: [], read: (c, o) => clientType(Number(provider[1]), c, o) };
  if (name === "portal-webhooks.json") return { what: "the portal's webhooks (GET /webhooks)", members: [], read: portalWebhook };
  if (name === "dashboard-webhooks.json") return { what: "the dashboard's hooks (GET /api/hooks)", members: ["hooks"], read: dashboardWebhook };
  if (name === "llm-settings.json") return { what: "the LLM settings (GET /llm-settings)", members: ["data"], read: llmSettings };
  if (api !== null) return { what: "an API's OAuth clients", members: [], read: (c, o) => oauthClient(api[1]!, c, o) };
  if (key !== null) return { what: "an organisation key (GET /gw/org/keys/{keyID})", members: [], read: (s, o) => orgKey(s, key[1], o) };
  return undefined;
}

function readAnswer(file: string, answer: unknown, kind: AnswerFile): SourceRead {
  // an org key's answer is one object; every other answer a list (or a list member)
  const list = kind.members.length === 0 && isRecord(answer) && file.startsWith("org-key-") ? [answer] : listIn(answer, kind.members);
  if (list === undefined) {
    const expected = kind.members.length === 0 ? "a JSON list" : `an object with ${kind.members.map((m) => `\`${m}\``).join(" or ")}: a list`;
    return { resources: [], entries: [errorEntry({ file }, source, `not the answer ${kind.what} gives: expected ${expected}`)] };
  }
  const read: SourceRead = { resources: [], entries: [] };
  list.forEach((item, i) => {
    const origin = { file, at: kind.members.length === 0 ? `/${i}` : `/${kind.members[0]!}/${i}` };
    const made = isRecord(item) ? kind.read(item, origin) : "not an object";
    if (typeof made === "string") read.entries.push(errorEntry(origin, source, `not the answer ${kind.what} gives: ${made}`));
    else read.resources.push(made);
  });
  return read;
}

/** Products that carry no ProviderID when no provider stands in: one error at the file, not one per product. */
function withoutProvider(file: string, read: SourceRead, provider: ProductProvider): SourceRead {
  if (file !== "products.json" || provider.id !== undefined) return read;
  const orphans = read.entries.filter((e) => e.reason?.endsWith("no API provider stands in for it") === true);
  if (orphans.length === 0) return read;
  const at = `${orphans
    .slice(0, 5)
    .map((e) => e.origin.at ?? "")
    .join(", ")}${orphans.length > 5 ? ", …" : ""}`;
  const entry = errorEntry(
    { file },
    source,
    `${orphans.length} product(s) (${at}) carry no ProviderID (the list answer has none): ${provider.why}`,
    providerHint,
  );
  return { resources: read.resources, entries: [...read.entries.filter((e) => !orphans.includes(e)), entry] };
}

export async function readServiceAnswers(root: string, limits: InputLimits, productProvider?: number): Promise<SourceRead> {
  const names = (await readdir(root)).sort();
  if (names.length > limits.maxFiles) throw new InputProblem(`the directory holds ${names.length} files, more than the ${limits.maxFiles} an import reads`);
  let provider: ProductProvider;
  try {
    provider = productProviderOf(root, names, limits, productProvider);
  } catch (err) {
    if (!(err instanceof InputProblem)) throw err;
    provider = { why: `${providersFile}: ${err.message}` };
  }
  const read: SourceRead = { resources: [], entries: [] };
  const perFile = names.map((name): SourceRead => {
    // read for the products' provider (product-provider.ts), not a resource of its own
    if (name === providersFile) return { resources: [], entries: [] };
    const kind = answerFileOf(name, provider.id);
    if (kind === undefined) {
      return {
        resources: [],
        entries: [skipEntry({ file: name }, source, "not a file name of the saved answers", "name each answer as docs/user/import.md's curl lines save it")],
      };
    }
    try {
      const docs = readSourceFile(root, name, limits);
      return withoutProvider(name, readAnswer(name, docs[0]?.value, kind), provider);
    } catch (err) {
      if (!(err instanceof InputProblem)) throw err;
      return { resources: [], entries: [errorEntry({ file: name }, source, err.message, err.hint)] };
    }
  });
  for (const one of perFile) {
    read.resources.push(...one.resources);
    read.entries.push(...one.entries);
  }
  return read;
}
