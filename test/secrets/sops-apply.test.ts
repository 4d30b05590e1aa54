/**
 * End to end, through the CLI against the sandbox: an org key's HMAC string comes from a SOPS
 * file written by `sops` (test/fixtures/sops/README.md). The sandbox receives the decrypted value;
 * a commit that replaces the encrypted file is planned as a change and applied; without an age
 * identity `validate` passes and says the value is not resolved here; an altered file is refused
 * and nothing is sent. A SOPS file among the
 * resource files is not a resource. The decrypted value is in no
 * output (plan in every format, logs, the state, errors).
 */
import { copyFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { spawnCli } from "../helpers/cli.js";
import { rawStateText } from "../helpers/state-file.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const fixtures = path.resolve(import.meta.dirname, "../fixtures/sops");
/** The plaintext of token.enc.json's one value, and of message.enc.yaml's. */
const tokenValue = "t00m4nys3cr3tz";
const rotatedValue = "hello";

describe("${sops:} end to end", () => {
  it("applies a secret from a SOPS file, plans and applies its rotation, and never shows it", async () => {
    const h = await harness();
    const key = await readFile(path.join(fixtures, "keys.txt"), "utf8");
    await copyFile(path.join(fixtures, "token.enc.json"), path.join(h.dir, "secrets/hmac.enc.json"));
    const keys = path.join(h.dir, "config/gateway/org-keys.yaml");
    await writeFile(keys, (await readFile(keys, "utf8")).replace("${file:acme-hmac.txt}", "${sops:hmac.enc.json}"));
    // HOME: no ~/.config/sops/age/keys.txt of the machine's user is read
    const env = { ...process.env, ...h.env, HOME: h.dir, SOPS_AGE_KEY: key, GATESYNC_LOG_LEVEL: "debug" };
    const cfgFile = path.join(h.dir, "gatesync.yaml");
    const outputs: string[] = [];
    const cli = async (args: string[], run = env): Promise<number> => {
      const r = await spawnCli(args, { env: run, cwd: h.dir });
      outputs.push(r.stdout, r.stderr);
      return r.code;
    };

    // a SOPS file among the resource files is recognised by its metadata, never read as a resource
    await copyFile(path.join(fixtures, "example.age.yaml"), path.join(h.dir, "config/gateway/secrets.enc.yaml"));
    const validated = await spawnCli(["validate", "--config", cfgFile], { env, cwd: h.dir });
    outputs.push(validated.stdout, validated.stderr);
    expect(validated.code).toBe(0);
    expect(validated.stdout).not.toMatch(/\[(NOT_A_RESOURCE|UNKNOWN_KIND|SCHEMA_VIOLATION)\] config\/gateway\/secrets\.enc\.yaml/);
    for (const format of ["text", "markdown", "json"]) expect(await cli(["plan", "--config", cfgFile, "--format", format])).toBe(0);
    expect(await cli(["apply", "--config", cfgFile, "--auto-approve", "--allow-empty-state"]), outputs.slice(-2).join("\n")).toBe(0);
    expect(JSON.stringify(h.sandbox.inspect.store.orgKeys.get("acme"))).toContain(tokenValue);

    // the rotation: the commit replaces the encrypted file
    await copyFile(path.join(fixtures, "message.enc.yaml"), path.join(h.dir, "secrets/hmac.enc.json"));
    const rotated = await spawnCli(["plan", "--config", cfgFile, "--format", "json"], { env, cwd: h.dir });
    outputs.push(rotated.stdout, rotated.stderr);
    const changes = (JSON.parse(rotated.stdout) as { changes: Array<{ id: string; action: string }> }).changes;
    expect(changes.filter((c) => c.action !== "no-op")).toEqual([expect.objectContaining({ id: "OrgKey/acme", action: "update" })]);
    expect(await cli(["apply", "--config", cfgFile, "--auto-approve"])).toBe(0);
    expect(JSON.stringify(h.sandbox.inspect.store.orgKeys.get("acme"))).toContain(`"${rotatedValue}"`);

    // a commit that alters the encrypted file: refused, located, and nothing is sent for the key
    const file = path.join(h.dir, "secrets/hmac.enc.json");
    await writeFile(file, (await readFile(file, "utf8")).replace(/(message: ENC\[AES256_GCM,data:)4/, "$15"));
    const changing = (): number => h.sandbox.inspect.calls().log.filter((c) => c.method !== "GET").length;
    const sent = changing();
    const tampered = await spawnCli(["apply", "--config", cfgFile, "--auto-approve"], { env, cwd: h.dir });
    outputs.push(tampered.stdout, tampered.stderr);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout + tampered.stderr).toMatch(
      /error\[SOPS_INTEGRITY\] config\/gateway\/org-keys\.yaml:\d+:\d+ OrgKey\/acme spec\.hmac_string: hmac\.enc\.json: /,
    );
    expect(changing()).toBe(sent);
    await copyFile(path.join(fixtures, "message.enc.yaml"), file);

    // a merge request's job: no identity; the file and the reference are still checked
    const { SOPS_AGE_KEY: _, ...keyless } = env;
    const validate = await spawnCli(["validate", "--config", cfgFile], { env: keyless, cwd: h.dir });
    outputs.push(validate.stdout, validate.stderr);
    expect(validate.code).toBe(0);
    expect(validate.stdout).toContain("${sops:hmac.enc.json}");
    await writeFile(keys, (await readFile(keys, "utf8")).replace("${sops:hmac.enc.json}", "${sops:hmac.enc.json#mesage}"));
    const wrongPath = await spawnCli(["validate", "--config", cfgFile], { env: keyless, cwd: h.dir });
    expect(wrongPath.code).toBe(1);
    expect(wrongPath.stdout).toMatch(
      /error\[SOPS_KEY_PATH\] config\/gateway\/org-keys\.yaml:\d+:\d+ OrgKey\/acme spec\.hmac_string: hmac\.enc\.json: no value at mesage/,
    );

    outputs.push(await rawStateText(path.join(h.dir, "state/state.db")));
    expect(outputs.filter((o) => o.includes(tokenValue))).toEqual([]);
    await h.stop();
  }, 120_000);
});
