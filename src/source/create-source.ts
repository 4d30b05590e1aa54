import type { GatesyncConfig } from "../config/config.js";
import { ConfigError, ErrorCode } from "../errors.js";
import { GitSource } from "./git-source.js";
import { LocalSource } from "./local-source.js";
import type { Source } from "./source.js";

/** The source the config names; a git token is read from its variable here, never logged. */
export function createSource(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>): Source {
  const s = config.source;
  if (s.type === "directory") return new LocalSource(s.directory, { maxFiles: config.limits.maxFiles, watch: s.watch });
  let token: string | undefined;
  if (s.tokenEnv !== undefined) {
    token = env[s.tokenEnv];
    if (token === undefined || token === "")
      throw new ConfigError(ErrorCode.CONFIG_INVALID, `source.git.tokenEnv names ${s.tokenEnv}, which is not set`, { hint: "set it where gatesync runs" });
  }
  return new GitSource({
    url: s.url,
    ...(s.branch === undefined ? {} : { branch: s.branch }),
    ...(s.tag === undefined ? {} : { tag: s.tag }),
    ...(s.commit === undefined ? {} : { commit: s.commit }),
    subdirectory: s.subdirectory,
    cacheDir: s.cacheDir,
    ...(token === undefined ? {} : { token }),
    ...(s.sshKeyFile === undefined ? {} : { sshKeyFile: s.sshKeyFile }),
    ...(config.file === undefined ? {} : { configFile: config.file }),
  });
}
