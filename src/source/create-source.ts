import type { GatesyncConfig } from "../config/config.js";
import { ConfigError, ErrorCode } from "../errors.js";
import { GitSource } from "./git-source.js";
import { LocalSource } from "./local-source.js";
import type { Source } from "./source.js";

const definedOnly = (ref: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(ref).filter((e): e is [string, string] => e[1] !== undefined));

/** The source the config names (an environment's effective config: its `track:` over the top level's ref); a git token is read from its variable here, never logged. */
export function createSource(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>): Source {
  const s = config.source;
  if (s.type === "directory") return new LocalSource(s.directory, { maxFiles: config.limits.maxFiles, watch: s.watch });
  let token: string | undefined;
  if (s.tokenEnv !== undefined) {
    token = env[s.tokenEnv];
    if (token === undefined || token === "")
      throw new ConfigError(ErrorCode.CONFIG_INVALID, `source.git.tokenEnv names ${s.tokenEnv}, which is not set`, { hint: "set it where gatesync runs" });
  }
  // an environment's `track:` replaces the top level's ref (a promotion's source is the top level's: its runs say what it applies)
  const track = config.track === undefined || "promotedFrom" in config.track ? undefined : config.track;
  const ref =
    track === undefined ? { branch: s.branch, tag: s.tag, commit: s.commit } : "branch" in track ? { branch: track.branch } : { tagPattern: track.tag };
  return new GitSource({
    url: s.url,
    ...definedOnly(ref),
    subdirectory: s.subdirectory,
    cacheDir: s.cacheDir,
    ...(token === undefined ? {} : { token }),
    ...(s.sshKeyFile === undefined ? {} : { sshKeyFile: s.sshKeyFile }),
    ...(config.file === undefined ? {} : { configFile: config.file }),
  });
}
