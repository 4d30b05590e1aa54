/**
 * The resources the repository declares, for `state list` to mark the records of resources gone
 * from it as orphaned. Read as `plan` reads them (secrets need not resolve: only names are
 * wanted); when the repository cannot be read or does not validate, nothing is marked, and
 * the listing says why.
 */
import type { GatesyncConfig } from "../../../config/config.js";
import { hasErrors } from "../../../errors.js";
import { resourceId } from "../../../kinds/resource.js";
import { runSecretSource } from "../../../source/secret-roots.js";
import { SecretResolver } from "../../../secrets/resolver.js";
import { RepositoryValidator } from "../../../validate/repository/repository-validator.js";
import type { CliIo } from "../../common/cli-io.js";
import { environmentConfig } from "../../common/environment-option.js";
import { valuesOptionsOf } from "../../../config/environments.js";
import { openResources } from "../../common/resources.js";

export type DeclaredIds = { readonly declared: ReadonlySet<string> } | { readonly declared: undefined; readonly why: string };

export async function declaredIds(configFile: string, io: CliIo, env?: string): Promise<DeclaredIds> {
  let config: GatesyncConfig;
  try {
    config = await environmentConfig(configFile, env, "state list");
  } catch (err) {
    return { declared: undefined, why: `the repository could not be read (${(err as Error).message})` };
  }
  return declaredIdsOf(config, io, undefined);
}

/** The same, of a config already read; `dir`: a checkout to read instead of the config's source. */
export async function declaredIdsOf(config: GatesyncConfig, io: CliIo, dir: string | undefined): Promise<DeclaredIds> {
  try {
    const resources = await openResources(config, io.env, dir);
    try {
      const result = await RepositoryValidator.oneShot().validate({
        root: resources.input.root,
        ...(resources.input.boundary === undefined ? {} : { boundary: resources.input.boundary }),
        limits: config.limits,
        ...valuesOptionsOf(config),
        appTypeProviders: new Set(config.targets.portal?.appTypeProviders ?? []),
        secrets: {
          source: new SecretResolver(runSecretSource(config, io.env, resources.input)),
          missing: "warning",
        },
      });
      if (hasErrors(result.diagnostics)) return { declared: undefined, why: "the repository does not validate" };
      return { declared: new Set(result.resources.map(resourceId)) };
    } finally {
      await resources.close();
    }
  } catch (err) {
    return { declared: undefined, why: `the repository could not be read (${(err as Error).message})` };
  }
}
