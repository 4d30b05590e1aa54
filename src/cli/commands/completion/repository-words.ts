/**
 * The repository's words for completion: the `--env` names of gatesync.yaml and the
 * `Kind/name` of every resource in a directory source. Read within a budget (a shell waits for
 * them at every Tab): what is not read by then is left out, and anything that fails gives no
 * words — never an error on the terminal.
 */
import { loadConfig } from "../../../config/config.js";
import type { GatesyncConfig } from "../../../config/config.js";
import { environmentNames } from "../../../config/environments.js";
import { listResourceFiles } from "../../../load/list-files.js";
import { defaultLimits, readResourceFile } from "../../../load/read-file.js";
import type { RepositoryWords } from "./words.js";

/** How long a Tab may wait for the resources' names. */
export const completionBudgetMs = 1_500;
/** Most files read for their names (a larger repository completes the first ones found). */
const maxFilesRead = 5_000;

const configOf = async (file: string | undefined): Promise<GatesyncConfig | undefined> => loadConfig(file ?? "gatesync.yaml").catch(() => undefined);

/** `Kind/name` of one parsed document, when it declares a resource. */
function addressOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { kind, metadata } = value as { kind?: unknown; metadata?: { name?: unknown } };
  const name = metadata?.name;
  return typeof kind === "string" && typeof name === "string" ? `${kind}/${name}` : undefined;
}

async function addressesIn(config: GatesyncConfig, deadline: number): Promise<string[]> {
  if (config.source.type !== "directory") return []; // a git source is not fetched for a Tab
  const listed = await listResourceFiles({ root: config.source.directory, maxFiles: defaultLimits.maxFiles });
  const addresses: string[] = [];
  for (const file of listed.files.slice(0, maxFilesRead)) {
    if (Date.now() > deadline) break;
    const read = await readResourceFile(file, defaultLimits);
    for (const doc of read.documents) {
      const address = addressOf(doc.value);
      if (address !== undefined) addresses.push(address);
    }
  }
  return addresses;
}

export const repositoryWords: RepositoryWords = {
  async environments(file) {
    const config = await configOf(file);
    // without `environments:` there is no name to give
    return config?.environments === undefined ? [] : environmentNames(config);
  },
  async addresses(file) {
    const deadline = Date.now() + completionBudgetMs;
    const config = await configOf(file);
    return config === undefined ? [] : addressesIn(config, deadline).catch(() => []);
  },
};
