/**
 * Each environment decrypts with its own age identities, named by its secret scope
 * (secrets.sopsAgeKeyEnv, secrets.sopsAgeKeyFile): production's key never decrypts in a staging
 * run, and no resource reads a key through ${env:} or ${file:}.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { secretScope } from "../../src/config/credentials.js";
import { environmentNamed } from "../../src/config/environments.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";

const fixtures = path.resolve(import.meta.dirname, "../fixtures/sops");
const key = readFileSync(path.join(fixtures, "keys.txt"), "utf8");

function environments(): { dir: string; cfg: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "gatesync-sops-env-"));
  mkdirSync(path.join(dir, "secrets"));
  mkdirSync(path.join(dir, "keys"));
  copyFileSync(path.join(fixtures, "token.enc.json"), path.join(dir, "secrets/token.enc.json"));
  copyFileSync(path.join(fixtures, "keys.txt"), path.join(dir, "secrets/prod-keys.txt"));
  const cfg = path.join(dir, "gatesync.yaml");
  writeFileSync(
    cfg,
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets: { gateway: { url: "http://127.0.0.1:1", credentialEnv: GW_KEY } }
environments:
  staging:
    secrets: { fileRoot: ./secrets, envPrefix: SOPS_, sopsAgeKeyEnv: SOPS_AGE_KEY_STAGING }
  production:
    secrets: { fileRoot: ./secrets, envPrefix: SOPS_, sopsAgeKeyEnv: SOPS_AGE_KEY_PRODUCTION, sopsAgeKeyFile: ./secrets/prod-keys.txt }
`,
  );
  return { dir, cfg };
}

describe("${sops:} per environment", () => {
  it("decrypts with the environment's own identities only", async () => {
    const { dir, cfg } = environments();
    const config = await loadConfig(cfg);
    // production's key is in the process's environment, and sops's own variable too
    const env = { HOME: dir, SOPS_AGE_KEY_PRODUCTION: key, SOPS_AGE_KEY: key };
    const source = (name: string): EnvFileSecretSource => {
      const c = environmentNamed(config, name).config;
      return new EnvFileSecretSource(env, c.secrets.fileRoot, secretScope(c));
    };
    expect(source("production").lookup({ provider: "sops", name: "token.enc.json" })).toMatchObject({ ok: true, value: "t00m4nys3cr3tz" });
    const staging = source("staging").lookup({ provider: "sops", name: "token.enc.json" });
    expect(staging).toMatchObject({ ok: false, reason: "missing", code: "SOPS_NO_IDENTITY" });
    expect(staging.ok ? "" : staging.message).toContain("the variable SOPS_AGE_KEY_STAGING");
  });

  it("never lets a resource read the identities through ${env:} or ${file:}", async () => {
    const { dir, cfg } = environments();
    const production = environmentNamed(await loadConfig(cfg), "production").config;
    const source = new EnvFileSecretSource({ HOME: dir, SOPS_AGE_KEY_PRODUCTION: key }, production.secrets.fileRoot, secretScope(production));
    expect(source.lookup({ provider: "env", name: "SOPS_AGE_KEY_PRODUCTION" })).toMatchObject({ ok: false, reason: "scope" });
    expect(source.lookup({ provider: "file", name: "prod-keys.txt" })).toMatchObject({ ok: false, reason: "scope" });
    // nor another environment's
    const staging = environmentNamed(await loadConfig(cfg), "staging").config;
    const fromStaging = new EnvFileSecretSource({ SOPS_AGE_KEY_PRODUCTION: key }, staging.secrets.fileRoot, secretScope(staging));
    expect(fromStaging.lookup({ provider: "env", name: "SOPS_AGE_KEY_PRODUCTION" })).toMatchObject({ ok: false, reason: "scope" });
    expect(fromStaging.lookup({ provider: "file", name: "prod-keys.txt" })).toMatchObject({ ok: false, reason: "scope" });
  });
});
