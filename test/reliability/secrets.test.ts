/**
 * Secrets: unique values planted in every secret-bearing field and every credential; then
 * validate, plan in every format, apply (with debug logging), a failing apply, state commands,
 * and the daemon with its endpoints and debug logs. Every output, log line, state file and
 * error is searched for the planted values: there must be no hit.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { cliArgs, spawnCli } from "../helpers/cli.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const planted = (label: string): string => `PLANTED-${label}-${randomBytes(9).toString("hex")}`;

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  }
  return out;
}

describe("secrets", () => {
  it("never appear in any output, log, state file or error", async () => {
    const h = await harness();
    const secrets: Record<string, string> = {
      PETSTORE_MOBILE_CLIENT_SECRET: planted("oauth-secret"),
      CRM_HOOK_TOKEN: planted("webhook-url-token"),
      CHAT_WEBHOOK_TOKEN: planted("dashboard-header"),
      GATESYNC_WEBHOOK_SECRET: planted("webhook-hmac"),
      GATESYNC_SYNC_TOKEN: planted("sync-token"),
      GATESYNC_HASH_KEY: planted("hash-key"),
    };
    const fileSecret = planted("hmac-string-file");
    await writeFile(path.join(h.dir, "secrets/acme-hmac.txt"), `${fileSecret}\n`);
    // a secret in a LLM system prompt and a basic-auth password, by reference too
    const extra = { LLM_PROMPT_SECRET: planted("llm-prompt"), BASIC_PASSWORD: planted("basic-auth") };
    const llm = path.join(h.dir, "config/llm/settings.yaml");
    await writeFile(llm, (await readFile(llm, "utf8")).replace("system_prompt: You answer questions about our APIs, briefly and accurately.", "system_prompt: ${env:LLM_PROMPT_SECRET}"));
    const keys = path.join(h.dir, "config/gateway/org-keys.yaml");
    await writeFile(keys, (await readFile(keys, "utf8")).replace("  alias: Globex\n", "  alias: Globex\n  basic_auth_data: { password: \"${env:BASIC_PASSWORD}\", hash_type: plain }\n"));
    const env = { ...h.env, ...secrets, ...extra, GATESYNC_LOG_LEVEL: "debug" };
    const cfgFile = path.join(h.dir, "gatesync.yaml");
    await writeFile(cfgFile, `${await readFile(cfgFile, "utf8")}server: { listen: "127.0.0.1:0", webhookSecretEnv: GATESYNC_WEBHOOK_SECRET, syncTokenEnv: GATESYNC_SYNC_TOKEN }\nschedule: { interval: 1h }\n`);
    const values = [...Object.values(secrets), ...Object.values(extra), fileSecret, h.env.GW_KEY!, h.env.PORTAL_KEY!, h.env.DASH_TOKEN!, h.env.LLM_KEY!, h.env.BATCH_KEY!];
    const outputs: Array<[string, string]> = [];
    const cli = async (label: string, ...args: string[]): Promise<number> => {
      const r = await spawnCli(args, { env, cwd: h.dir });
      outputs.push([`${label} stdout`, r.stdout], [`${label} stderr`, r.stderr]);
      return r.code;
    };

    expect(await cli("validate text", "validate", "--config", cfgFile)).toBe(0);
    expect(await cli("validate json", "validate", "--config", cfgFile, "--format", "json")).toBe(0);
    for (const format of ["text", "markdown", "json"]) expect(await cli(`plan ${format}`, "plan", "--config", cfgFile, "--format", format, "--out", path.join(h.dir, `plan-${format}.json`))).toBe(0);
    expect(await cli("apply", "apply", "--config", cfgFile, "--auto-approve")).toBe(0);
    expect(await cli("state list", "state", "list", "--config", cfgFile, "--json")).toBe(0);
    // rotate every secret, and plan again: old and new values both planted
    const rotated = Object.fromEntries(Object.keys(secrets).filter((k) => !k.startsWith("GATESYNC_")).map((k) => [k, planted(`rotated-${k}`)]));
    values.push(...Object.values(rotated));
    Object.assign(env, rotated);
    for (const format of ["text", "markdown", "json"]) expect(await cli(`plan after rotation ${format}`, "plan", "--config", cfgFile, "--format", format)).toBe(0);
    // a failing apply: the gateway refuses the credential
    await writeFile(keys, (await readFile(keys, "utf8")).replace("  alias: Globex\n", "  alias: Globex Corp\n"));
    const wrongKey = planted("wrong-gw-key");
    values.push(wrongKey);
    const failing = await spawnCli(["apply", "--config", cfgFile, "--auto-approve"], { env: { ...env, GW_KEY: wrongKey }, cwd: h.dir });
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain("403: Attempted administrative access with invalid or missing key!");
    outputs.push(["failing apply", failing.stdout + failing.stderr]);

    // the daemon, with its endpoints and debug logs
    const daemon = spawn(process.execPath, cliArgs("run", "--config", cfgFile), { cwd: h.dir, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let logs = "";
    daemon.stdout.on("data", (b: Buffer) => (logs += b.toString()));
    daemon.stderr.on("data", (b: Buffer) => (logs += b.toString()));
    for (let i = 0; i < 200 && !/"url":"http/.test(logs); i++) await sleep(50);
    const url = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(logs)![1]!;
    for (let i = 0; i < 200 && !logs.includes("run finished"); i++) await sleep(50);
    for (const p of ["/status", "/metrics", "/healthz", "/readyz"]) outputs.push([`daemon ${p}`, (await call(`${url}${p}`)).text]);
    outputs.push(["daemon bad sync", (await call(`${url}/sync`, { method: "POST", headers: { authorization: "Bearer wrong" } })).text]);
    outputs.push(["daemon good sync", (await call(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${secrets.GATESYNC_SYNC_TOKEN}` } })).text]);
    await sleep(500);
    daemon.kill("SIGTERM");
    await new Promise((resolve) => daemon.on("close", resolve));
    outputs.push(["daemon logs", logs]);

    // every file gatesync wrote: state, journal, backups, saved plans
    for (const f of await filesUnder(h.dir)) {
      if (f.includes(`${path.sep}config${path.sep}`) || f.includes(`${path.sep}secrets${path.sep}`) || f.endsWith("gatesync.yaml")) continue;
      outputs.push([path.relative(h.dir, f), await readFile(f, "utf8")]);
    }
    const hits = outputs.flatMap(([where, text]) => values.filter((v) => text.includes(v)).map((v) => `${v.slice(0, 30)} in ${where}`));
    expect(hits).toEqual([]);
    expect(outputs.length).toBeGreaterThan(25);
    // and the debug logs did carry the run
    expect(logs).toMatch(/"resource":"OrgKey\/globex"/);
    await h.stop();
    process.stdout.write(`secrets: ${values.length} planted values, ${outputs.length} outputs searched, 0 hits\n`);
  }, 180_000);
});
