/** The secrets the daemon's routes check, read from the variables gatesync.yaml names. */
import type { GatesyncConfig } from "../../config/config.js";
import { ConfigError, ErrorCode } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { DaemonServerOptions } from "./served.js";

/**
 * The tokens the daemon's routes check, from the variables gatesync.yaml names (an empty value is
 * unset), with a warning for each trigger route left without one.
 */
export function serverTokens(
  config: GatesyncConfig,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): Pick<DaemonServerOptions, "webhookSecret" | "syncToken" | "stateToken" | "pagesToken" | "variables"> {
  const secret = (name: string | undefined): string | undefined => (name === undefined || env[name] === "" ? undefined : env[name]);
  const webhookSecret = secret(config.server.webhookSecretEnv);
  const syncToken = secret(config.server.syncTokenEnv);
  const stateToken = secret(config.server.stateTokenEnv);
  const pagesToken = secret(config.server.pagesTokenEnv);
  warnUnsetTriggers(config, { webhookSecret, syncToken }, logger);
  return {
    ...(webhookSecret === undefined ? {} : { webhookSecret }),
    ...(syncToken === undefined ? {} : { syncToken }),
    ...(stateToken === undefined ? {} : { stateToken }),
    variables: { webhookSecretEnv: config.server.webhookSecretEnv, syncTokenEnv: config.server.syncTokenEnv },
    ...(pagesToken === undefined ? {} : { pagesToken }),
  };
}

/**
 * Said at start: a trigger whose variable is unset answers 404, so pushes wait for the
 * schedule. A variable gatesync.yaml names but the environment lacks is a mistake (a warning);
 * a trigger not configured at all is a choice (info).
 */
function warnUnsetTriggers(config: GatesyncConfig, values: { webhookSecret: string | undefined; syncToken: string | undefined }, logger: Logger): void {
  const every = config.schedule.intervalMs / 1000;
  const triggers = [
    { route: "POST /hooks/git", setting: "server.webhookSecretEnv", variable: config.server.webhookSecretEnv, value: values.webhookSecret },
    { route: "POST /sync", setting: "server.syncTokenEnv", variable: config.server.syncTokenEnv, value: values.syncToken },
  ];
  for (const t of triggers) {
    if (t.value !== undefined) continue;
    if (t.variable === undefined) {
      logger.info({ route: t.route, setting: t.setting, scheduleSeconds: every }, "trigger not configured: it answers 404, runs follow the schedule");
    } else {
      logger.warn(
        { route: t.route, setting: t.setting, variable: t.variable, scheduleSeconds: every, hint: `set ${t.variable} in the daemon's environment` },
        "trigger variable not set: it answers 404 until it is, runs follow the schedule",
      );
    }
  }
}

/** The token of POST /environments/NAME/promote and the variable holding it (recorded as who promoted); an empty value is unset. */
export function promoteTokenOf(
  config: GatesyncConfig,
  env: Readonly<Record<string, string | undefined>>,
): { token: string | undefined; variable: string | undefined } {
  const variable = config.server.promoteTokenEnv;
  const value = variable === undefined ? undefined : env[variable];
  return { token: value === undefined || value === "" ? undefined : value, variable };
}

/** The settings naming the variable of each purpose's secret (docs/user/daemon.md, "Routes and their credentials"). */
const purposeSettings = ["pagesTokenEnv", "stateTokenEnv", "syncTokenEnv", "webhookSecretEnv", "promoteTokenEnv"] as const;

/**
 * One secret per purpose: two of server's settings naming the same variable, or variables holding
 * the same value, would let the holder of one (the pages' reader) do what the other guards (promote,
 * read the state). Refused at start and at a reload (the last good config stays in force), naming
 * the settings and their variables, never a value.
 */
export function assertOneTokenPerPurpose(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>): void {
  const set = purposeSettings.flatMap((setting) => {
    const variable = config.server[setting];
    const value = variable === undefined ? undefined : env[variable];
    return variable === undefined || value === undefined || value === "" ? [] : [{ setting, variable, value }];
  });
  for (const [i, a] of set.entries()) {
    const b = set.slice(i + 1).find((x) => x.value === a.value);
    if (b === undefined) continue;
    const same = a.variable === b.variable ? `both name ${a.variable}` : `${a.variable} and ${b.variable} hold the same value`;
    throw new ConfigError(ErrorCode.CONFIG_TOKEN_SHARED, `server.${a.setting} and server.${b.setting} ${same}: each purpose takes a token of its own`, {
      hint:
        a.variable === b.variable
          ? `name another variable in server.${b.setting} and give it a value of its own (e.g. \`openssl rand -hex 32\`)`
          : `give ${b.variable} a value of its own (e.g. \`openssl rand -hex 32\`), and the clients of server.${b.setting} that value`,
      location: { ...(config.file === undefined ? {} : { file: config.file }), path: `server.${b.setting}` },
    });
  }
}
