/**
 * A merge request's plan job has no age identity: `gatesync plan` still validates every resource
 * and plans, comparing each SOPS value it cannot decrypt by its encrypted form (the files are
 * written by the real `sops` tool: test/fixtures/sops/README.md). The plan says, per resource and
 * field, in text, markdown and JSON, which values it could not compare: the one last applied is
 * no change; one encrypted again since is a change, never shown. With the key it plans normally;
 * `apply` without the key still stops.
 */
import { copyFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { spawnCli } from "../helpers/cli.js";
import type { CliResult } from "../helpers/cli.js";
import { rawStateText } from "../helpers/state-file.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const fixtures = path.resolve(import.meta.dirname, "../fixtures/sops");
/** The plaintext of token.enc.json's one value. */
const tokenValue = "t00m4nys3cr3tz";

interface JsonChange {
  readonly id: string;
  readonly action: string;
  readonly fields: ReadonlyArray<{ readonly path: string; readonly after?: unknown }>;
  readonly notCompared?: ReadonlyArray<{ readonly path: string; readonly encrypted: string }>;
}

const acmeOf = (r: CliResult): JsonChange => (JSON.parse(r.stdout) as { changes: JsonChange[] }).changes.find((c) => c.id === "OrgKey/acme")!;

describe("gatesync plan without the age identity", () => {
  it("plans every resource, says which SOPS values it could not compare, counts one encrypted again as a change, never shows it", async () => {
    const h = await harness();
    const key = await readFile(path.join(fixtures, "keys.txt"), "utf8");
    const secretFile = path.join(h.dir, "secrets/hmac.enc.json");
    await copyFile(path.join(fixtures, "token.enc.json"), secretFile);
    const keys = path.join(h.dir, "config/gateway/org-keys.yaml");
    await writeFile(keys, (await readFile(keys, "utf8")).replace("${file:acme-hmac.txt}", "${sops:hmac.enc.json}"));
    // HOME: no ~/.config/sops/age/keys.txt of the machine's user is read
    const { SOPS_AGE_KEY: _key, SOPS_AGE_KEY_FILE: _file, ...machine } = process.env;
    const keyless: NodeJS.ProcessEnv = { ...machine, ...h.env, HOME: h.dir, GATESYNC_LOG_LEVEL: "debug" };
    const withKey = { ...keyless, SOPS_AGE_KEY: key };
    const outputs: string[] = [];
    const cli = async (args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> => {
      const r = await spawnCli([...args, "--config", path.join(h.dir, "gatesync.yaml")], { env, cwd: h.dir });
      outputs.push(r.stdout, r.stderr);
      return r;
    };
    const plans = async (env: NodeJS.ProcessEnv): Promise<Record<"text" | "markdown" | "json", CliResult>> => ({
      text: await cli(["plan", "--format", "text"], env),
      markdown: await cli(["plan", "--format", "markdown"], env),
      json: await cli(["plan", "--format", "json"], env),
    });

    // nothing applied yet: the key is created, its value not decrypted here
    const first = await plans(keyless);
    for (const r of Object.values(first)) expect(r.code, r.stderr).toBe(0);
    expect(acmeOf(first.json)).toMatchObject({ action: "create", notCompared: [{ path: "hmac_string", encrypted: "new" }] });
    expect(first.text.stdout).toContain("1 sensitive value from SOPS files not compared: no age identity here");
    expect(first.text.stdout).toMatch(/OrgKey\/acme hmac_string: not applied yet/);
    expect(first.markdown.stdout).toContain("`OrgKey/acme` `hmac_string`: not applied yet");
    // the other resources are planned as usual
    expect((JSON.parse(first.json.stdout) as { changes: JsonChange[] }).changes.filter((c) => c.notCompared !== undefined)).toHaveLength(1);

    expect((await cli(["apply", "--auto-approve", "--allow-empty-state"], withKey)).code).toBe(0);

    // the encrypted value is the one applied: no change, and the plan still says it was not compared
    const same = await plans(keyless);
    expect(acmeOf(same.json)).toMatchObject({ action: "no-op", fields: [], notCompared: [{ path: "hmac_string", encrypted: "unchanged" }] });
    expect(same.text.stdout).toMatch(/OrgKey\/acme hmac_string: encrypted value unchanged since the last apply: no change/);
    expect(same.text.stdout).toContain("No changes");
    expect(same.markdown.stdout).toContain("`OrgKey/acme` `hmac_string`: encrypted value unchanged since the last apply: no change");

    // a commit rotates the value: a change, counted, not shown
    await copyFile(path.join(fixtures, "message.enc.yaml"), secretFile);
    const rotated = await plans(keyless);
    expect(acmeOf(rotated.json)).toMatchObject({
      action: "update",
      fields: [{ path: "hmac_string", after: { sensitive: true } }],
      notCompared: [{ path: "hmac_string", encrypted: "changed" }],
    });
    expect(rotated.text.stdout).toMatch(/~ OrgKey\/acme {2}update/);
    expect(rotated.text.stdout).toMatch(/OrgKey\/acme hmac_string: encrypted value changed since the last apply: counted as a change/);
    expect(rotated.markdown.stdout).toContain("`OrgKey/acme` `hmac_string`: encrypted value changed since the last apply: counted as a change");

    // with the key it plans normally: the same update, nothing left uncompared
    const keyed = await plans(withKey);
    expect(acmeOf(keyed.json)).toMatchObject({ action: "update", fields: [{ path: "hmac_string" }] });
    expect(acmeOf(keyed.json).notCompared).toBeUndefined();
    expect(keyed.text.stdout).not.toContain("not compared");

    // an apply needs the key: it stops, located, and sends nothing
    const sent = h.sandbox.inspect.calls().log.filter((c) => c.method !== "GET").length;
    const refused = await cli(["apply", "--auto-approve"], keyless);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toMatch(/error\[SOPS_NO_IDENTITY\] config\/gateway\/org-keys\.yaml:\d+:\d+ OrgKey\/acme spec\.hmac_string/);
    expect(h.sandbox.inspect.calls().log.filter((c) => c.method !== "GET").length).toBe(sent);

    // a wrong key path is still an error without the key
    await writeFile(keys, (await readFile(keys, "utf8")).replace("${sops:hmac.enc.json}", "${sops:hmac.enc.json#mesage}"));
    const wrongPath = await cli(["plan"], keyless);
    expect(wrongPath.code).toBe(1);
    expect(wrongPath.stdout + wrongPath.stderr).toMatch(/error\[SOPS_KEY_PATH\] config\/gateway\/org-keys\.yaml:\d+:\d+ OrgKey\/acme spec\.hmac_string/);

    outputs.push(await rawStateText(path.join(h.dir, "state/state.db")));
    // the placeholder of a value not decrypted is compared, never written either
    for (const value of [tokenValue, "sops-not-decrypted"]) expect(outputs.filter((o) => o.includes(value))).toEqual([]);
    await h.stop();
  }, 240_000);
});
