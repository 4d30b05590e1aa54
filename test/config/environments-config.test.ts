/**
 * `environments:` in gatesync.yaml: each environment's effective config (its settings over the
 * top level's, its own state), the implicit `default` of a config without them, and the errors
 * a user meets (an unknown --env, two environments on one state, a patch outside the config).
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { environmentNamed, environmentsOf } from "../../src/config/environments.js";
import { ConfigError, ValidationFailed } from "../../src/errors.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const twoEnvironments = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: config }
targets:
  llm: { url: "http://127.0.0.1:9/llm", credentialEnv: LLM_KEY }
values:
  team: storefront
  rate: 10
environments:
  staging:
    targets:
      gateway: { url: "http://127.0.0.1:8081", credentialEnv: STAGING_GW_KEY }
    values: { rate: 100, upstream: "http://staging.internal" }
    orphans: deactivate
    patches:
      - overlays/staging.yaml
      - { kind: OrgKey, metadata: { name: partner }, $patch: delete }
  production:
    targets:
      gateway: { url: "http://127.0.0.1:8082", credentialEnv: PROD_GW_KEY }
    values: { upstream: "http://prod.internal", beta: false }
    selector: tier!=experimental
    secrets: { env: [PROD_SECRET] }
`;

describe("environments in gatesync.yaml", () => {
  it("gives each environment its own targets, values, settings and a namespaced state, in the file's order", async () => {
    const dir = await tempRepo({ "gatesync.yaml": twoEnvironments });
    const config = await loadConfig(path.join(dir, "gatesync.yaml"));
    const [staging, production] = environmentsOf(config);
    expect([staging!.name, production!.name]).toEqual(["staging", "production"]);
    expect(staging!.values).toEqual({ team: "storefront", rate: 100, upstream: "http://staging.internal" });
    expect(production!.values).toEqual({ team: "storefront", rate: 10, upstream: "http://prod.internal", beta: false });
    expect(staging!.config.targets.gateway?.url).toBe("http://127.0.0.1:8081");
    expect(staging!.config.targets.llm?.url).toBe("http://127.0.0.1:9/llm");
    expect(production!.config.targets.gateway?.credentialEnv).toBe("PROD_GW_KEY");
    expect(staging!.config.orphans).toBe("deactivate");
    expect(production!.config.orphans).toBe("report");
    expect(production!.config.selector).toBe("tier!=experimental");
    expect(staging!.config.selector).toBeUndefined();
    expect(production!.config.secrets.env).toEqual(["PROD_SECRET"]);
    expect(staging!.config.secrets.env).toEqual([]);
    expect(staging!.config.state).toEqual({ backend: "sqlite", path: path.join(dir, ".gatesync/state.staging.db") });
    expect(production!.config.state).toEqual({ backend: "sqlite", path: path.join(dir, ".gatesync/state.production.db") });
    expect(staging!.config.environment).toBe("staging");
    expect(staging!.config.environments).toBeUndefined();
    expect(staging!.patches.map((p) => p.type)).toEqual(["file", "inline"]);
    expect(staging!.patches[0]).toMatchObject({ file: path.join(dir, "overlays/staging.yaml"), at: "environments.staging.patches[0]" });
  });

  it("namespaces a PostgreSQL state by schema, `-` written `_`", async () => {
    const yaml = twoEnvironments
      .replace("environments:", "state: { backend: postgres, urlEnv: PG_URL, schema: gs }\nenvironments:")
      .replaceAll("production", "eu-west");
    const dir = await tempRepo({ "gatesync.yaml": yaml });
    const [, euWest] = environmentsOf(await loadConfig(path.join(dir, "gatesync.yaml")));
    expect(euWest!.config.state).toEqual({ backend: "postgres", urlEnv: "PG_URL", schema: "gs_eu_west" });
  });

  it("keeps a config without environments as it is: one implicit environment, `default`, the config itself", async () => {
    const dir = await tempRepo({
      "gatesync.yaml": `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: config }\ntargets:\n  llm: { url: "http://127.0.0.1:9/llm", credentialEnv: LLM_KEY }\n`,
    });
    const config = await loadConfig(path.join(dir, "gatesync.yaml"));
    const all = environmentsOf(config);
    expect(all).toHaveLength(1);
    expect(all[0]!.name).toBe("default");
    expect(all[0]!.implicit).toBe(true);
    expect(all[0]!.config).toBe(config);
    expect(config.environment).toBeUndefined();
    expect(environmentNamed(config, "default").config).toBe(config);
  });

  it("refuses an unknown --env with the known names and the nearest", async () => {
    const dir = await tempRepo({ "gatesync.yaml": twoEnvironments });
    const config = await loadConfig(path.join(dir, "gatesync.yaml"));
    const err = (() => {
      try {
        environmentNamed(config, "prodution");
      } catch (e) {
        return e as ConfigError;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.code).toBe("CONFIG_UNKNOWN_ENVIRONMENT");
    expect(err!.message).toContain("staging, production");
    expect(err!.hint).toBe("did you mean --env production?");
  });

  it("refuses two environments on one state and a patch file outside the config's directory, located", async () => {
    const yaml = twoEnvironments
      .replace("    orphans: deactivate\n", "    orphans: deactivate\n    state: { backend: sqlite, path: .gatesync/state.production.db }\n")
      .replace("overlays/staging.yaml", "../elsewhere.yaml");
    const dir = await tempRepo({ "gatesync.yaml": yaml });
    const failure = await loadConfig(path.join(dir, "gatesync.yaml")).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ValidationFailed);
    const found = (failure as ValidationFailed).diagnostics.map((d) => `${d.code} ${d.path} ${d.line}:${d.column}`);
    const outside = positionOf(yaml, "../elsewhere.yaml");
    expect(found).toContain(`CONFIG_INVALID environments.staging.patches[0] ${outside.line}:${outside.column}`);
    expect(found.some((f) => f.startsWith("CONFIG_INVALID environments.production.state"))).toBe(true);
  });

  it("refuses a config with neither targets nor environments, and a value of another type", async () => {
    const dir = await tempRepo({
      "gatesync.yaml": `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: config }\nvalues: { nested: { a: 1 } }\n`,
    });
    const failure = await loadConfig(path.join(dir, "gatesync.yaml")).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ValidationFailed);
    const messages = (failure as ValidationFailed).diagnostics.map((d) => `${d.path}: ${d.message}`).join("\n");
    expect(messages).toContain("give `targets`");
    expect(messages).toMatch(/values\.nested/);
  });
});
