/**
 * Where the one-shot commands (plan, apply, state resolve) read resources: `--dir` (a checkout,
 * e.g. a merge request's, planned against the shared state), else the config's source — a
 * directory as it is, or the git source fetched the way the daemon fetches it.
 */
import path from "node:path";
import type { GatesyncConfig } from "../config/config.js";
import { createSource } from "../source/create-source.js";

export interface CommandResources {
  /** The fields of a plan or apply input that say where the resources are. */
  readonly input: { readonly root: string; readonly boundary?: string; readonly commit?: string };
  close(): Promise<void>;
}

export async function openResources(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>, dir: string | undefined): Promise<CommandResources> {
  const none = async (): Promise<void> => Promise.resolve();
  if (dir !== undefined) return { input: { root: path.resolve(dir) }, close: none };
  if (config.source.type === "directory") return { input: { root: config.source.directory }, close: none };
  const source = createSource(config, env);
  try {
    const { root, boundary, commit } = await source.fetch();
    return { input: { root, boundary, ...(commit === undefined ? {} : { commit }) }, close: async () => source.close() };
  } catch (err) {
    await source.close();
    throw err;
  }
}
