/**
 * `tsx scripts/check-published.ts [--from DIR] [--write]`: do gatesync's copies of the production
 * gateway's published schemas agree with the published ones?
 *
 * - schemas/published/x-gw-api-gateway.schema.json (compiled into gatesync's validate by
 *   `npm run schemas`) and src/sandbox/published/x-gw-api-gateway.schema.json (the sandbox's
 *   own) must be byte-for-byte the published extension schema;
 * - every member of the published organisation-key session (SessionState, AccessDefinition,
 *   APILimit) must be a member of gatesync's OrgKey schema (schemas/org-key.schema.json).
 *
 * DIR defaults to the copy the tests read (test/fixtures/shared/reference/published, refreshed
 * from the shared folder by scripts/refresh-shared.sh). `--write` refreshes the two copies, after
 * which `npm run schemas` recompiles gatesync's.
 */
import { copyFile, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const defaultPublishedDir = path.join(root, "test/fixtures/shared/reference/published");
const extension = "x-gw-api-gateway.schema.json";
const copies = [path.join(root, "schemas/published", extension), path.join(root, "src/sandbox/published", extension)];

export interface CopyCheck {
  readonly copy: string;
  readonly published: string;
  readonly same: boolean;
}

/** Each copy of the extension schema against the published one. */
export async function publishedCopies(dir: string = defaultPublishedDir): Promise<CopyCheck[]> {
  const published = path.join(dir, extension);
  const text = await readFile(published, "utf8");
  return Promise.all(copies.map(async (copy) => ({ copy: path.relative(root, copy), published, same: (await readFile(copy, "utf8")) === text })));
}

type Json = Record<string, unknown>;
const membersOf = (schema: unknown): string[] => Object.keys((schema as Json | undefined)?.properties ?? {});

/** Members of the published session that gatesync's OrgKey schema does not take, as `where.member`. */
export async function missingSessionMembers(dir: string = defaultPublishedDir): Promise<string[]> {
  const session = JSON.parse(await readFile(path.join(dir, "gateway-session.schema.json"), "utf8")) as { $defs: Json };
  const orgKey = JSON.parse(await readFile(path.join(root, "schemas/org-key.schema.json"), "utf8")) as { properties: { spec: Json }; $defs: Json };
  const access = orgKey.$defs.accessRights as Json;
  const pairs: Array<[string, unknown, unknown]> = [
    ["session", session.$defs.SessionState, orgKey.properties.spec],
    ["access_rights", session.$defs.AccessDefinition, access],
    ["access_rights.limit", session.$defs.APILimit, (access.properties as Json).limit],
  ];
  return pairs.flatMap(([where, published, ours]) =>
    membersOf(published)
      .filter((m) => !membersOf(ours).includes(m))
      .map((m) => `${where}.${m}`),
  );
}

async function main(args: readonly string[]): Promise<void> {
  const at = args.indexOf("--from");
  const dir = at >= 0 && args[at + 1] !== undefined ? path.resolve(args[at + 1]!) : defaultPublishedDir;
  const checks = await publishedCopies(dir);
  if (args.includes("--write")) {
    for (const c of checks.filter((x) => !x.same)) await copyFile(c.published, path.join(root, c.copy));
  }
  const stale = args.includes("--write") ? [] : checks.filter((c) => !c.same);
  const missing = await missingSessionMembers(dir);
  for (const c of stale) process.stdout.write(`differs: ${c.copy} (published: ${c.published}); refresh with --write, then npm run schemas\n`);
  for (const m of missing) process.stdout.write(`not in schemas/org-key.schema.json: ${m}\n`);
  if (stale.length === 0 && missing.length === 0) process.stdout.write(`agree with ${path.relative(process.cwd(), dir) || "."}\n`);
  else process.exitCode = 1;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main(process.argv.slice(2));
