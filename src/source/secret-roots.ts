/**
 * Where a run's secret files are: files a commit references come from that commit. With a git
 * source, `secrets.fileRoot` names a directory of the repository, read in the checkout of the
 * commit being run — relative to the repository's settings file (`source.git.config`, default
 * the root's gatesync.yaml), as the merge-request job resolves it in its clone — and never
 * outside the checkout, nor through a link out of it. The references `secrets.fromDaemonDisk`
 * names (default `${file:}`: a plaintext file belongs beside the daemon, not in git) read the
 * daemon's own disk instead, below `fileRoot` relative to the daemon's file. A directory source
 * is the daemon's disk and the repository at once: both resolve below `fileRoot` as written.
 */
import path from "node:path";
import type { GatesyncConfig } from "../config/config.js";
import { secretScope } from "../config/credentials.js";
import { isInside, toPosix } from "../file-paths.js";
import { oneDocumentFast } from "../load/fast-yaml.js";
import { EnvFileSecretSource } from "../secrets/env-file-source.js";
import type { SecretRoot, SecretRoots } from "../secrets/env-file-source.js";
import { workTreeOf } from "./repository-path.js";

/** What a run reads its files from: the resource directory and, for a git source, the commit's checkout. */
export interface SnapshotDirs {
  readonly root: string;
  readonly boundary?: string | undefined;
}

/** The `${file:}` and `${sops:}` roots of a run of `config` over the files at `at`. */
export function secretRoots(config: GatesyncConfig, at: SnapshotDirs): SecretRoots {
  const onDisk: SecretRoot = { dir: config.secrets.fileRoot };
  if (config.source.type !== "git") return { file: onDisk, sops: onDisk };
  const daemonDisk = new Set(config.secrets.fromDaemonDisk ?? ["file"]);
  const inCommit = commitRoot(config, at);
  return { file: daemonDisk.has("file") ? onDisk : inCommit, sops: daemonDisk.has("sops") ? onDisk : inCommit };
}

/**
 * The secret source of a run of `config` over the files at `at` — its roots and its scope, the
 * SOPS files read by the value-only parse — the one every plan, validation and completion reads
 * references through; without a config, everything below the resource directory resolves.
 */
export function runSecretSource(
  config: GatesyncConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
  at: SnapshotDirs,
  options: { readonly withoutIdentity?: "refuse" | "placeholder" } = {},
): EnvFileSecretSource {
  const roots = config === undefined ? path.resolve(at.root) : secretRoots(config, at);
  return new EnvFileSecretSource(env, roots, config === undefined ? undefined : secretScope(config), { ...options, sopsParse: oneDocumentFast });
}

/** `secrets.fileRoot` in the commit's checkout, named from the repository's root. */
function commitRoot(config: GatesyncConfig, at: SnapshotDirs): SecretRoot {
  const top = at.boundary ?? workTreeOf(path.resolve(at.root)) ?? path.resolve(at.root);
  const settingsFile = config.source.type === "git" ? (config.source.config ?? "gatesync.yaml") : "gatesync.yaml";
  // an absolute one names no directory of the repository: its references are refused (PATH_ESCAPE, with the way out)
  const written = config.secrets.fileRootWritten ?? ".";
  const dir = path.resolve(top, path.dirname(settingsFile), written);
  const relative = toPosix(path.relative(top, dir));
  return { dir, within: top, shown: relative === "" ? "the repository's root" : isInside(dir, top) ? `the repository's ${relative}` : written };
}
