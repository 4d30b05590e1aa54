/**
 * `validate` warns when a SOPS file a reference reads is ignored by git (SOPS_FILE_IGNORED, at
 * the file, with the .gitignore line that ignores it): `git add -A` leaves it out, and a daemon
 * reading the commit finds nothing. The repository is the one the old `gatesync init` wrote
 * (`secrets/*`); the hint's lines, added as it says, put the file into the next `git add -A`
 * and the warning goes. A plaintext file beside it stays ignored. The old code said nothing.
 */
import { execFileSync } from "node:child_process";
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnCli } from "../helpers/cli.js";
import { ageIdentity, sopsYaml, hmacOrgKey } from "../helpers/sops-file.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const config = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_ADMIN_KEY }
secrets: { fileRoot: ./secrets }
`;

const orgKey = hmacOrgKey("${sops:staging/app.enc.yaml#acme.hmac}");

describe("a SOPS file git ignores", () => {
  it("is warned about, located, with the lines that keep it in; following the hint commits it and no plaintext", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config, "config/org-key.yaml": orgKey, ".gitignore": "secrets/*\n!secrets/.gitkeep\n" });
    execFileSync("git", ["init", "-q"], { cwd: dir });
    await mkdir(path.join(dir, "secrets/staging"), { recursive: true });
    await writeFile(path.join(dir, "secrets/staging/app.enc.yaml"), sopsYaml({ acme: { hmac: "an-encrypted-hmac-value" } }, ageIdentity().recipient));
    await writeFile(path.join(dir, "secrets/staging/plain.txt"), "a-plaintext-secret\n");
    const env = { ...process.env, HOME: dir, NO_COLOR: "1" };
    const validate = async (): Promise<{ code: number; stdout: string }> => spawnCli(["validate", "--config", "gatesync.yaml"], { cwd: dir, env });

    const warned = await validate();
    expect(warned.code, warned.stdout).toBe(0);
    const line = /^warning\[SOPS_FILE_IGNORED\] secrets\/staging\/app\.enc\.yaml:1:1: .*$/m.exec(warned.stdout)?.[0];
    expect(line, warned.stdout).toContain("git ignores it (.gitignore:1: `secrets/*`)");
    const hint = /^\s+hint: keep encrypted files in and plaintext out: add the lines (.*) at the end of \.gitignore/m.exec(warned.stdout)?.[1];
    expect(hint, warned.stdout).toBeDefined();
    const lines = [...hint!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    expect(lines.length).toBeGreaterThan(0);

    const add = /then `(git add -- [^`]+)`/.exec(warned.stdout)?.[1];
    expect(add, warned.stdout).toBe("git add -- secrets/staging/app.enc.yaml");

    // the hint followed: its lines, then its command as a shell runs it
    await appendFile(path.join(dir, ".gitignore"), `${lines.join("\n")}\n`);
    execFileSync("sh", ["-c", add!], { cwd: dir });
    execFileSync("git", ["add", "-A"], { cwd: dir });
    const staged = execFileSync("git", ["diff", "--cached", "--name-only"], { cwd: dir, encoding: "utf8" }).trim().split("\n");
    expect(staged).toContain("secrets/staging/app.enc.yaml");
    expect(staged).not.toContain("secrets/staging/plain.txt");
    const clean = await validate();
    expect(clean.stdout).not.toContain("SOPS_FILE_IGNORED");
  }, 60_000);
});
