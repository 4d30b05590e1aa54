/**
 * Where the one-shot commands (validate, plan, apply, state resolve) read resources: `--dir` (a
 * checkout, e.g. a merge request's, planned against the shared state), else the config's source
 * — a directory as it is, or the git source fetched the way the daemon fetches it.
 */
import path from "node:path";
import type { GatesyncConfig } from "../../config/config.js";
import { trackKey } from "../../config/track-section.js";

export interface CommandResources {
  /** The fields of a plan or apply input that say where the resources are. */
  readonly input: { readonly root: string; readonly boundary?: string; readonly commit?: string | Promise<string | undefined> };
  close(): Promise<void>;
}

/**
 * The commit checked out in `dir` when it lies in a git work tree (a CI checkout), else
 * undefined — also when git answers with anything but a commit id, or says nothing for
 * `checkoutHeadTimeoutMs` (a hung git must not hang the plan that only names the commit).
 */
export async function checkoutHead(dir: string): Promise<string | undefined> {
  try {
    // git is loaded only where a directory is planned as a checkout
    const { simpleGit } = await import("simple-git");
    const head = (await simpleGit({ baseDir: dir, timeout: { block: checkoutHeadTimeoutMs } }).revparse(["--verify", "HEAD"])).trim();
    return /^[0-9a-f]{40,64}$/.test(head) ? head : undefined;
  } catch {
    return undefined; // not a work tree, no commit yet, no git: planned without a commit
  }
}

/** `git rev-parse HEAD` answers in milliseconds; past this, the plan names no commit. */
const checkoutHeadTimeoutMs = 5_000;

export async function openResources(
  config: GatesyncConfig,
  env: Readonly<Record<string, string | undefined>>,
  dir: string | undefined,
): Promise<CommandResources> {
  const none = async (): Promise<void> => Promise.resolve();
  if (dir !== undefined) {
    const root = path.resolve(dir);
    // asked while the files are checked: git's answer (it never rejects) is awaited where the plan is computed
    return { input: { root, commit: checkoutHead(root) }, close: none };
  }
  if (config.source.type === "directory") return { input: { root: config.source.directory }, close: none };
  // a git source (and the file watching of the directory source) is loaded only when one is configured
  const { createSource } = await import("../../source/create-source.js");
  const source = createSource(config, env);
  try {
    const { root, boundary, commit } = await source.fetch();
    return { input: { root, boundary, ...(commit === undefined ? {} : { commit }) }, close: async () => source.close() };
  } catch (err) {
    await source.close();
    throw err;
  }
}

/**
 * The resources of several environments planned together: one checkout (`--dir`) or directory
 * for all, or from a git source one fetch per ref the environments follow (`track:`), each
 * environment planned at the commit it would apply. A ref that cannot be fetched fails the
 * environments that follow it only.
 */
export function resourcesPerRef(
  env: Readonly<Record<string, string | undefined>>,
  dir: string | undefined,
): { of(config: GatesyncConfig): Promise<CommandResources>; close(): Promise<void> } {
  const opened = new Map<string, Promise<CommandResources>>();
  return {
    of: (config) => {
      const key = dir !== undefined || config.source.type === "directory" ? "" : (trackKey(config.track, config.source) ?? "");
      const resources = opened.get(key) ?? openResources(config, env, dir);
      opened.set(key, resources);
      return resources;
    },
    close: async () => {
      for (const r of opened.values())
        await r.then(
          (o) => o.close(),
          () => undefined,
        );
    },
  };
}
