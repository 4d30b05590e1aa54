/**
 * Where the one-shot commands (plan, apply, state resolve) read resources: `--dir` (a checkout,
 * e.g. a merge request's, planned against the shared state), else the config's source — a
 * directory as it is, or the git source fetched the way the daemon fetches it.
 */
import path from "node:path";
import type { GatesyncConfig } from "../config/config.js";
import { createSource } from "../source/create-source.js";

export interface CommandResources {
  /** The resource directory. */
  readonly root: string;
  /** The repository root, when the resources are a part of one. */
  readonly boundary?: string;
  /** The commit, for a git source. */
  readonly commit?: string;
  close(): Promise<void>;
}

export async function openResources(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>, dir: string | undefined): Promise<CommandResources> {
  const none = async (): Promise<void> => Promise.resolve();
  if (dir !== undefined) return { root: path.resolve(dir), close: none };
  if (config.source.type === "directory") return { root: config.source.directory, close: none };
  const source = createSource(config, env);
  try {
    const snapshot = await source.fetch();
    return { root: snapshot.root, boundary: snapshot.boundary, ...(snapshot.commit === undefined ? {} : { commit: snapshot.commit }), close: async () => source.close() };
  } catch (err) {
    await source.close();
    throw err;
  }
}

/** The fields of a plan or apply input that say where the resources are. */
export function resourcesInput(r: CommandResources): { root: string; boundary?: string; commit?: string } {
  return { root: r.root, ...(r.boundary === undefined ? {} : { boundary: r.boundary }), ...(r.commit === undefined ? {} : { commit: r.commit }) };
}
