/**
 * Secrets: unique values planted in every secret-bearing field and every credential; then
 * validate, plan in every format, apply (with debug logging), a failing apply, state commands,
 * and the daemon with its endpoints and debug logs. Every output, log line, state file and
 * error is searched for the planted values: there must be no hit.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { cp, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { cliArgs, spawnCli } from "../helpers/cli.js";
import { startEchoServer } from "../helpers/echo-server.js";
import { call } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const planted = (label: string): string => `PLANTED-${label}-${randomBytes(9).toString("hex")}`;

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  }
  return out;
}

/** Every file gatesync wrote below `dir`: the state database and its WAL, saved plans. */
async function filesWritten(dir: string): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const f of await filesUnder(dir)) {
    if (f.includes(`${path.sep}config${path.sep}`) || f.includes(`${path.sep}secrets${path.sep}`) || f.endsWith("gatesync.yaml")) continue;
    out.push([path.relative(dir, f), await readFile(f, "utf8")]);
  }
  return out;
}

const hitsOf = (outputs: ReadonlyArray<[string, string]>, values: readonly string[]): string[] =>
  outputs.flatMap(([where, text]) => values.filter((v) => text.includes(v)).map((v) => `${v.slice(0, 30)} in ${where}`));

/** `gatesync run` until its first run finished: its endpoints, then its logs (returned too). */
async function daemonOutputs(
  cfgFile: string,
  cwd: string,
  env: Record<string, string>,
  syncToken: string,
  outputs: Array<[string, string]>,
  until = "run finished",
): Promise<string> {
  const daemon = spawn(process.execPath, cliArgs("run", "--config", cfgFile), { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let logs = "";
  daemon.stdout.on("data", (b: Buffer) => (logs += b.toString()));
  daemon.stderr.on("data", (b: Buffer) => (logs += b.toString()));
  for (let i = 0; i < 200 && !/"url":"http/.test(logs); i++) await sleep(50);
  const url = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(logs)![1]!;
  for (let i = 0; i < 400 && !logs.includes(until); i++) await sleep(50);
  for (const p of ["/status", "/metrics", "/healthz", "/readyz"]) outputs.push([`daemon ${p}`, (await call(`${url}${p}`)).text]);
  outputs.push(["daemon bad sync", (await call(`${url}/sync`, { method: "POST", headers: { authorization: "Bearer wrong" } })).text]);
  outputs.push(["daemon good sync", (await call(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).text]);
  await sleep(500);
  daemon.kill("SIGTERM");
  await new Promise((resolve) => daemon.on("close", resolve));
  outputs.push(["daemon logs", logs]);
  return logs;
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
    await writeFile(
      llm,
      (await readFile(llm, "utf8")).replace(
        "system_prompt: You answer questions about our APIs, briefly and accurately.",
        "system_prompt: ${env:LLM_PROMPT_SECRET}",
      ),
    );
    const keys = path.join(h.dir, "config/gateway/org-keys.yaml");
    await writeFile(
      keys,
      (await readFile(keys, "utf8")).replace(
        "  alias: Globex\n",
        '  alias: Globex\n  basic_auth_data: { password: "${env:BASIC_PASSWORD}", hash_type: plain }\n',
      ),
    );
    const env = { ...h.env, ...secrets, ...extra, GATESYNC_LOG_LEVEL: "debug" };
    const cfgFile = path.join(h.dir, "gatesync.yaml");
    await writeFile(
      cfgFile,
      `${await readFile(cfgFile, "utf8")}server: { listen: "127.0.0.1:0", webhookSecretEnv: GATESYNC_WEBHOOK_SECRET, syncTokenEnv: GATESYNC_SYNC_TOKEN }\nschedule: { interval: 1h }\n`,
    );
    const values = [
      ...Object.values(secrets),
      ...Object.values(extra),
      fileSecret,
      h.env.GW_KEY!,
      h.env.PORTAL_KEY!,
      h.env.DASH_TOKEN!,
      h.env.LLM_KEY!,
      h.env.BATCH_KEY!,
    ];
    const outputs: Array<[string, string]> = [];
    const cli = async (label: string, ...args: string[]): Promise<number> => {
      const r = await spawnCli(args, { env, cwd: h.dir });
      outputs.push([`${label} stdout`, r.stdout], [`${label} stderr`, r.stderr]);
      return r.code;
    };

    expect(await cli("validate text", "validate", "--config", cfgFile)).toBe(0);
    expect(await cli("validate json", "validate", "--config", cfgFile, "--format", "json")).toBe(0);
    for (const format of ["text", "markdown", "json"])
      expect(await cli(`plan ${format}`, "plan", "--config", cfgFile, "--format", format, "--out", path.join(h.dir, `plan-${format}.json`))).toBe(0);
    expect(await cli("apply", "apply", "--config", cfgFile, "--auto-approve", "--allow-empty-state")).toBe(0);
    expect(await cli("state list", "state", "list", "--config", cfgFile, "--json")).toBe(0);
    // rotate every secret, and plan again: old and new values both planted
    const rotated = Object.fromEntries(
      Object.keys(secrets)
        .filter((k) => !k.startsWith("GATESYNC_"))
        .map((k) => [k, planted(`rotated-${k}`)]),
    );
    values.push(...Object.values(rotated));
    Object.assign(env, rotated);
    for (const format of ["text", "markdown", "json"])
      expect(await cli(`plan after rotation ${format}`, "plan", "--config", cfgFile, "--format", format)).toBe(0);
    // a failing apply: the gateway refuses the credential
    await writeFile(keys, (await readFile(keys, "utf8")).replace("  alias: Globex\n", "  alias: Globex Corp\n"));
    const wrongKey = planted("wrong-gw-key");
    values.push(wrongKey);
    const failing = await spawnCli(["apply", "--config", cfgFile, "--auto-approve", "--allow-empty-state"], { env: { ...env, GW_KEY: wrongKey }, cwd: h.dir });
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain("403: Attempted administrative access with invalid or missing key!");
    outputs.push(["failing apply", failing.stdout + failing.stderr]);

    const logs = await daemonOutputs(cfgFile, h.dir, env, secrets.GATESYNC_SYNC_TOKEN!, outputs);
    outputs.push(...(await filesWritten(h.dir)));
    expect(hitsOf(outputs, values)).toEqual([]);
    expect(outputs.length).toBeGreaterThan(25);
    // and the debug logs did carry the run
    expect(logs).toMatch(/"resource":"OrgKey\/globex"/);
    await h.stop();
    process.stdout.write(`secrets: ${values.length} planted values, ${outputs.length} outputs searched, 0 hits\n`);
  }, 180_000);
});

/** A repository (the examples' resources and secrets) whose gatesync.yaml points every target at `url`. */
async function echoRepo(url: string, extra = ""): Promise<{ dir: string; cfgFile: string }> {
  const dir = await tempRepo();
  await cp(path.join(projectRoot, "examples/config"), path.join(dir, "config"), { recursive: true });
  await cp(path.join(projectRoot, "examples/secrets"), path.join(dir, "secrets"), { recursive: true });
  const cfgFile = path.join(dir, "gatesync.yaml");
  await writeFile(
    cfgFile,
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${url}, credentialEnv: GW_KEY, batch: { listenPath: /gw-batch/, apiId: gw-loopback, keyEnv: BATCH_KEY, maxSize: 50 } }
  portal: { url: ${url}/portal/api, credentialEnv: PORTAL_KEY, appTypeProviders: [3] }
  dashboard: { url: ${url}, tokenEnv: DASH_TOKEN }
  llm: { url: ${url}/llm/api, credentialEnv: LLM_KEY }
state: { backend: sqlite, path: ./state/state.db }
retries: { max: 1, baseDelayMs: 10, maxDelayMs: 20, timeoutMs: 5000 }
server: { listen: "127.0.0.1:0", webhookSecretEnv: GATESYNC_WEBHOOK_SECRET, syncTokenEnv: GATESYNC_SYNC_TOKEN }
schedule: { interval: 1h }
${extra}`,
  );
  return { dir, cfgFile };
}

describe("secrets against a server that echoes every request", () => {
  it("appear nowhere: not in 4xx/5xx answers, batch item bodies, logs, state, /status or saved plans", async () => {
    const echo = await startEchoServer();
    const { dir, cfgFile } = await echoRepo(
      echo.url,
      "secrets: { fileRoot: ./secrets, env: [PETSTORE_MOBILE_CLIENT_SECRET, CRM_HOOK_TOKEN, CHAT_WEBHOOK_TOKEN] }\n",
    );
    const fileSecret = planted("hmac-file");
    await writeFile(path.join(dir, "secrets/acme-hmac.txt"), `${fileSecret}\n`);
    const env: Record<string, string> = {
      // characters that JSON and URL encoding change: the echo carries them escaped
      PETSTORE_MOBILE_CLIENT_SECRET: `${planted("oauth")}"quoted"/ä`,
      CRM_HOOK_TOKEN: `${planted("url-token")}&x= y`,
      CHAT_WEBHOOK_TOKEN: planted("dash-header"),
      GW_KEY: planted("gw-key"),
      BATCH_KEY: planted("batch-key"),
      PORTAL_KEY: planted("portal-key"),
      DASH_TOKEN: planted("dash-token"),
      LLM_KEY: planted("llm-key"),
      GATESYNC_WEBHOOK_SECRET: planted("webhook-hmac"),
      GATESYNC_SYNC_TOKEN: planted("sync-token"),
      GATESYNC_HASH_KEY: planted("hash-key"),
      GATESYNC_LOG_LEVEL: "debug",
    };
    const values = [...Object.values(env).filter((v) => v !== "debug"), fileSecret];
    const searched = values.flatMap((v) => [v, JSON.stringify(v).slice(1, -1), encodeURIComponent(v)]);
    const outputs: Array<[string, string]> = [];
    const cli = async (label: string, ...args: string[]): Promise<number> => {
      const r = await spawnCli(args, { env, cwd: dir });
      outputs.push([`${label} stdout`, r.stdout], [`${label} stderr`, r.stderr]);
      return r.code;
    };
    expect(await cli("validate", "validate", "--config", cfgFile)).toBe(0);
    for (const format of ["text", "markdown", "json"])
      expect(await cli(`plan ${format}`, "plan", "--config", cfgFile, "--format", format, "--out", path.join(dir, `plan-${format}.json`))).toBe(0);
    expect(await cli("apply", "apply", "--config", cfgFile, "--auto-approve", "--allow-empty-state")).toBe(1);
    expect(await cli("state list", "state", "list", "--config", cfgFile, "--json")).toBe(0);
    expect(await cli("apply again", "apply", "--config", cfgFile, "--auto-approve", "--allow-empty-state")).toBe(1);
    const sent = echo.requests();
    const logs = await daemonOutputs(cfgFile, dir, env, env.GATESYNC_SYNC_TOKEN!, outputs);
    outputs.push(...(await filesWritten(dir)));
    await echo.stop();
    // the server did echo: the answers reached the outputs, scrubbed
    expect(sent).toBeGreaterThan(10);
    expect(outputs.map(([, t]) => t).join("\n")).toContain("[redacted]");
    expect(logs).toMatch(/"status":(400|500)/);
    expect(hitsOf(outputs, searched)).toEqual([]);
    process.stdout.write(`secrets (echoing server): ${values.length} planted values, ${sent} requests echoed, ${outputs.length} outputs searched, 0 hits\n`);
  }, 180_000);

  it("a resource that references gatesync's own credentials is refused at validate, and nothing is sent", async () => {
    const echo = await startEchoServer();
    const own = ["GW_KEY", "BATCH_KEY", "PORTAL_KEY", "DASH_TOKEN", "LLM_KEY", "GATESYNC_WEBHOOK_SECRET", "GATESYNC_SYNC_TOKEN", "GATESYNC_HASH_KEY"];
    // listing them does not help
    const { dir, cfgFile } = await echoRepo(echo.url, `secrets: { fileRoot: ., env: [${own.join(", ")}] }\n`);
    await writeFile(path.join(dir, "id_ed25519"), "not really a key\n");
    const refs = [...own.map((n) => `\${env:${n}}`), "${file:gatesync.yaml}", "${file:state/state.db}", "${file:state/state.db-wal}"];
    const keys = refs
      .map((r, i) => `---\napiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: thief-${i} }\nspec:\n  keyId: thief-${i}\n  hmac_string: "${r}"\n`)
      .join("");
    await writeFile(path.join(dir, "config/thief.yaml"), keys);
    const env = Object.fromEntries(own.map((n) => [n, planted(n)]));
    const validate = await spawnCli(["validate", "--config", cfgFile], { env, cwd: dir });
    expect(validate.code).toBe(1);
    for (const [i, r] of refs.entries()) {
      const line = 7 * i + 7;
      expect(validate.stdout).toContain(`error[SECRET_SCOPE] config/thief.yaml:${line}:16 OrgKey/thief-${i} spec.hmac_string: ${r}`);
    }
    expect(validate.stdout).toContain("targets.gateway.credentialEnv");
    expect(validate.stdout).toContain("the hash key (GATESYNC_HASH_KEY)");
    expect(validate.stdout).toContain("state.path");
    const apply = await spawnCli(["apply", "--config", cfgFile, "--auto-approve", "--allow-empty-state"], { env, cwd: dir });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain("error[SECRET_SCOPE]");
    expect(echo.requests()).toBe(0);
    expect(
      hitsOf(
        [
          ["validate", validate.stdout + validate.stderr],
          ["apply", apply.stdout + apply.stderr],
        ],
        Object.values(env),
      ),
    ).toEqual([]);
    await echo.stop();
  }, 60_000);
});

/** A git remote over HTTP that refuses every request with 401, echoing the request's headers. */
async function refusingGitRemote(): Promise<{ url: string; requests: () => number; stop: () => Promise<void> }> {
  let count = 0;
  const server = createServer((req, res) => {
    count++;
    req.resume();
    res.writeHead(401, { "www-authenticate": 'Basic realm="git"', "content-type": "text/plain" });
    res.end(`refused ${req.url ?? ""} ${JSON.stringify(req.headers)}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => count,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("git credentials", () => {
  it("a token in the git URL, or from tokenEnv, appears nowhere when the remote refuses it", async () => {
    const remote = await refusingGitRemote();
    const urlToken = planted("url-token");
    const urlPassword = planted("url-password");
    const envToken = planted("env-token");
    const dir = await tempRepo({ "config/.keep": "" });
    const config = (url: string, extra = ""): string =>
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: "${url}", branch: main, subdirectory: config, cacheDir: ./cache${extra} } }
targets:
  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY }
state: { backend: sqlite, path: ./state/state.db }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
schedule: { interval: 1h }
`;
    // the usual personal-access-token form: the token as the user name
    await writeFile(path.join(dir, "user.yaml"), config(`http://${urlToken}@${remote.url}/org/repo.git`));
    await writeFile(path.join(dir, "password.yaml"), config(`http://gatesync:${urlPassword}@${remote.url}/org/repo.git`, ", tokenEnv: GIT_TOKEN"));
    const env = { GW_KEY: planted("gw"), SYNC_TOKEN: planted("sync"), GIT_TOKEN: envToken, GATESYNC_LOG_LEVEL: "debug" };
    const outputs: Array<[string, string]> = [];
    for (const file of ["user.yaml", "password.yaml"]) {
      const r = await spawnCli(["validate", "--config", path.join(dir, file)], { env, cwd: dir });
      expect(r.code).toBe(1);
      outputs.push([`validate ${file}`, r.stdout + r.stderr]);
    }
    const logs = await daemonOutputs(path.join(dir, "user.yaml"), dir, env, env.SYNC_TOKEN, outputs, "source fetch failed");
    await daemonOutputs(path.join(dir, "password.yaml"), dir, env, env.SYNC_TOKEN, outputs, "source fetch failed");
    outputs.push(...(await filesWritten(dir)).filter(([f]) => !f.endsWith(".yaml")));
    await remote.stop();
    expect(remote.requests()).toBeGreaterThan(2);
    // git did fail on the credentials, and said so
    expect(logs).toContain("source fetch failed");
    expect(logs).toContain("the git URL carries credentials");
    expect(logs).toContain("source.git.tokenEnv");
    const status = outputs.find(([w]) => w === "daemon /status")![1];
    expect(status).toMatch(/cannot fetch git http:\/\/127\.0\.0\.1/);
    const values = [urlToken, urlPassword, envToken, Buffer.from(`gatesync:${envToken}`).toString("base64")];
    expect(hitsOf(outputs, values)).toEqual([]);
  }, 120_000);
});
