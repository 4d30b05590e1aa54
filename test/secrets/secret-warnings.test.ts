/**
 * `gatesync validate` (a merge request's job: no age identity) warns, located, about secrets
 * written in clear: a plaintext value under a SOPS file's own selectors, a value the selectors
 * leave in clear under a key that names a secret, and a literal in a resource's secret field.
 * Each hint is followed as a user would, and the warning is gone. No value is shown.
 */
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnCli } from "../helpers/cli.js";
import type { CliResult } from "../helpers/cli.js";
import { committedRepo, git } from "../helpers/git-repo.js";
import { hmacOrgKey } from "../helpers/sops-file.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const fixture = readFileSync(path.resolve(import.meta.dirname, "../fixtures/sops/example.age.yaml"), "utf8");

const orgKey = hmacOrgKey;

async function repository(files: { readonly key: string; readonly sops: string }): Promise<string> {
  const { dir } = await committedRepo({
    "gatesync.yaml": `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: { gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY } }\nsecrets: { fileRoot: ./secrets }\n`,
    "config/org-key.yaml": files.key,
    "secrets/app.enc.yaml": files.sops,
  });
  return dir;
}

const validate = async (dir: string): Promise<CliResult> => {
  const { SOPS_AGE_KEY: _key, SOPS_AGE_KEY_FILE: _file, ...machine } = process.env;
  return spawnCli(["validate", "--config", "gatesync.yaml"], { env: { ...machine, HOME: dir }, cwd: dir });
};

const shown = (r: CliResult): string => r.stdout + r.stderr;

describe("validate warns about secrets written in clear", () => {
  it("a plaintext value where the SOPS file's selectors say it is encrypted: located in the file; restoring it and setting the value with sops removes it", async () => {
    const dir = await repository({ key: orgKey("${sops:app.enc.yaml#myapp1}"), sops: fixture });
    const file = path.join(dir, "secrets/app.enc.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace(/password: ENC\[.*/, "password: hunter2hunter2"));
    const r = await validate(dir);
    expect(r.code).toBe(1);
    expect(shown(r)).toMatch(/error\[SOPS_INVALID\] config\/org-key\.yaml:10:16 OrgKey\/acme spec\.hmac_string: /);
    expect(shown(r)).toMatch(/warning\[SOPS_PLAINTEXT\] secrets\/app\.enc\.yaml:5:19 app2\.db\.password: the value at app2\.db\.password is plaintext/);
    expect(shown(r)).toContain(
      `hint: restore secrets/app.enc.yaml as sops wrote it (\`git checkout -- secrets/app.enc.yaml\`), then set the value with sops, which encrypts it: \`sops set secrets/app.enc.yaml '["app2"]["db"]["password"]' '"…"'\``,
    );
    expect(shown(r)).not.toContain("hunter2hunter2");
    // the hint followed (sops cannot run here: the file as sops wrote it is what `sops set` leaves)
    git(dir, "checkout", "--", "secrets/app.enc.yaml");
    const fixed = await validate(dir);
    expect(fixed.code, shown(fixed)).toBe(0);
    expect(shown(fixed)).not.toContain("SOPS_PLAINTEXT");
  }, 60_000);

  it("a value the selectors leave in clear under a key that names a secret: located; removing it as the hint says removes the warning", async () => {
    const sops = fixture.replace("nested_unencrypted:", "api_token_unencrypted: abcdef123456abcdef\nnested_unencrypted:");
    const dir = await repository({ key: orgKey("${sops:app.enc.yaml#myapp1}"), sops });
    const r = await validate(dir);
    expect(r.code, shown(r)).toBe(0);
    expect(shown(r)).toMatch(
      /warning\[SECRET_LITERAL\] secrets\/app\.enc\.yaml:29:24 api_token_unencrypted: the value at api_token_unencrypted names a secret/,
    );
    expect(shown(r)).toContain(`and remove api_token_unencrypted with \`sops unset secrets/app.enc.yaml '["api_token_unencrypted"]'\``);
    expect(shown(r)).toContain(`sops set secrets/app.enc.yaml '["api_token"]'`);
    expect(shown(r)).not.toContain("abcdef123456abcdef");
    // what `sops unset` leaves: the file without the key (sops cannot run here)
    await writeFile(path.join(dir, "secrets/app.enc.yaml"), fixture);
    expect(shown(await validate(dir))).not.toContain("SECRET_LITERAL");
  }, 60_000);

  it("a literal in a resource's secret field: located; reading it from a SOPS file as the hint says removes the warning", async () => {
    const dir = await repository({ key: orgKey("literal-hmac-value-123"), sops: fixture });
    const r = await validate(dir);
    expect(r.code, shown(r)).toBe(0);
    expect(shown(r)).toMatch(
      /warning\[SECRET_LITERAL\] config\/org-key\.yaml:10:16 OrgKey\/acme spec\.hmac_string: spec\.hmac_string names a secret but holds a literal/,
    );
    expect(shown(r)).toContain("write `${sops:app.enc.yaml#hmac_string}` here");
    expect(shown(r)).not.toContain("literal-hmac-value-123");
    await writeFile(path.join(dir, "config/org-key.yaml"), orgKey("${sops:app.enc.yaml#myapp1}"));
    const fixed = await validate(dir);
    expect(fixed.code, shown(fixed)).toBe(0);
    expect(shown(fixed)).not.toContain("SECRET_LITERAL");
  }, 60_000);

  it("a SOPS file among the resource files outside secrets.fileRoot, which no reference can read: moving it as the hint says removes the warning", async () => {
    const dir = await repository({ key: orgKey("${sops:app.enc.yaml#myapp1}"), sops: fixture });
    await writeFile(path.join(dir, "config/tokens.enc.yaml"), fixture);
    git(dir, "add", "-A");
    git(dir, "commit", "-qm", "a SOPS file beside the resources");
    const r = await validate(dir);
    expect(r.code, shown(r)).toBe(0);
    expect(shown(r)).toMatch(
      /warning\[SOPS_OUTSIDE_SCOPE\] config\/tokens\.enc\.yaml:1:1: config\/tokens\.enc\.yaml is a SOPS file, but it lies outside secrets\.fileRoot \(secrets\)/,
    );
    expect(shown(r)).toContain(
      "hint: move it below secrets.fileRoot (`git mv config/tokens.enc.yaml secrets/tokens.enc.yaml`) and read its values with `${sops:tokens.enc.yaml#KEY}`",
    );
    git(dir, "mv", "config/tokens.enc.yaml", "secrets/tokens.enc.yaml");
    const moved = await validate(dir);
    expect(moved.code, shown(moved)).toBe(0);
    expect(shown(moved)).not.toContain("SOPS_OUTSIDE_SCOPE");
  }, 60_000);
});
