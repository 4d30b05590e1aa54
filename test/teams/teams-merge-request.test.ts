/**
 * A merge request of one team on a gateway shared with another (docs/user/teams.md), planned as
 * the merge-request job plans it: against the daemon (`--state-url`), which runs both teams'
 * environments on a PostgreSQL state. The job reads the daemon's ownership registry with the
 * state token: billing's change of payments' org key is refused at the resource, naming the
 * owner and its environment, in the plan and in the comment, before the merge — whatever owner
 * the checkout's own gatesync.yaml claims; billing's OAuth client of payments' API is planned, a
 * reference across owners said so; the rest of the plan proceeds, and nothing is sent.
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { createLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { apiDefinition, doc, orgKey } from "../helpers/resources.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { callsOf, orgKeysOf } from "./teams-helpers.js";

const stateToken = "teams-merge-request-state-token";
let sandbox: SandboxHandle;
let daemon: Daemon;
let gateway: string;

/** The operator's file: one daemon, each team's environment its own directory, owner and state. */
const operatorFile = (): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./payments }
state: { backend: postgres, urlEnv: PG_URL, schema: ${testSchema()} }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
environments:
  payments-prod:
    owner: payments
    source: { directory: ./payments }
    state: { backend: postgres, urlEnv: PG_URL, schema: ${testSchema()} }
  billing-prod:
    owner: billing
    source: { directory: ./billing }
    state: { backend: postgres, urlEnv: PG_URL, schema: ${testSchema()} }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", stateTokenEnv: STATE_TOKEN }
`;

beforeAll(async () => {
  sandbox = await testSandbox();
  gateway = sandbox.urls.gateway.replace(/\/$/, "");
  const dir = await tempRepo({
    "payments/acme.yaml": orgKey({ name: "acme", keyId: "acme-mr", rate: 100, per: 60 }),
    "payments/pay.yaml": apiDefinition({
      name: "pay",
      apiId: "pay-mr",
      listenPath: "/pay-mr/",
      definition: { title: "Pay", server: "http://upstream.invalid" },
    }),
    "billing/own.yaml": orgKey({ name: "own", keyId: "billing-mr", rate: 5, per: 60 }),
  });
  await mkdir(path.join(dir, "operator"));
  const file = path.join(dir, "operator", "gatesync.yaml");
  await writeFile(file, operatorFile().replaceAll("./payments", "../payments").replaceAll("./billing", "../billing"));
  daemon = await startDaemon({
    config: await loadConfig(file),
    env: { GW_KEY: testCredentials.gatewayKey, STATE_TOKEN: stateToken, PG_URL: pgUrl },
    logger: createLogger({ level: "warn", destination: new Writable({ write: (_c, _e, done) => done() }) }),
    listen: "127.0.0.1:0",
    watchConfig: false,
  });
  await daemon.firstRun;
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  await sandbox.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

/** A checkout's gatesync.yaml: its own target is never used (the daemon's are), `more` its further lines. */
const checkoutFile = (environment: string, more = ""): string =>
  `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: { gateway: { url: "http://127.0.0.1:1", credentialEnv: GW_KEY } }\n${more}environments:\n  ${environment}:\n    values: {}\n`;

/** Billing's merge request: its checkout's files, its own gatesync.yaml forging payments as owner. */
async function billingCheckout(): Promise<string> {
  const dir = await tempRepo({
    "gatesync.yaml": checkoutFile("billing-prod", "owner: payments\n"),
    "config/own.yaml": orgKey({ name: "own", keyId: "billing-mr", rate: 5, per: 60 }),
    "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-mr", rate: 200, per: 60 }),
    "config/client.yaml": doc("OAuthClient", "app", "apiId: pay-mr\nclientId: app-mr\nredirect_uri: https://app.example/cb"),
  });
  // a clone, as the job's: files are named from the repository's root
  execFileSync("git", ["init", "-q"], { cwd: dir });
  return path.join(dir, "gatesync.yaml");
}

const job = (args: string[], token: string | undefined = stateToken): ReturnType<typeof runCli> =>
  runCli(args, { GATESYNC_LOG_LEVEL: "error", ...(token === undefined ? {} : { GATESYNC_STATE_TOKEN: token }) });

const refusal = (): string => `OWNED_ELSEWHERE: OrgKey/acme (org-key:acme-mr on gateway ${gateway}) is owned by team payments (environment payments-prod)`;
const reference =
  "references ApiDefinition/pay (api:pay-mr), owned by team payments (environment payments-prod): a reference across owners, allowed (nothing of it is written)";

describe("a team's merge request planned against the daemon of two teams", () => {
  it("refuses the other team's object at its file, names the owner, plans the rest, and says the reference", async () => {
    expect(orgKeysOf(sandbox).get("acme-mr")?.session.rate).toBe(100);
    const config = await billingCheckout();
    const calls = callsOf(sandbox);
    const planned = await job(["plan", "-c", config, "--state-url", daemon.url!, "--env", "billing-prod", "--detailed-exitcode"]);
    expect(planned.stdout).toContain(refusal());
    expect(planned.stdout).toMatch(/! OrgKey\/acme\s+blocked\s+config\/acme\.yaml:1/);
    expect(planned.stdout).toContain(reference);
    // blocked (3): the rest planned — billing's own key unchanged, its client an update
    expect(planned.code).toBe(3);
    expect(planned.stdout).toMatch(/~ OAuthClient\/app/);

    const comment = await job(["plan", "-c", config, "--state-url", daemon.url!, "--env", "billing-prod", "--format", "markdown"]);
    expect(comment.code).toBe(0);
    expect(comment.stdout).toContain(refusal());
    expect(comment.stdout).toContain("# at config/acme.yaml:1");
    expect(comment.stdout).toContain(reference);
    // without --env: every environment the daemon runs, each checked as its own owner — payments' acme is its own
    const every = await job(["plan", "-c", config, "--state-url", daemon.url!, "--format", "markdown"]);
    expect(every.stdout.match(/OWNED_ELSEWHERE: OrgKey\/acme/g)).toHaveLength(1);
    expect(every.stdout).toContain(refusal());
    // a plan sends nothing; payments' value stays
    expect(callsOf(sandbox)).toBe(calls);
    expect(orgKeysOf(sandbox).get("acme-mr")?.session.rate).toBe(100);
  });

  it("validate refuses the other team's object at its file, as the daemon's run will; the rest is valid", async () => {
    const config = await billingCheckout();
    const validated = await job(["validate", path.join(path.dirname(config), "config"), "-c", config, "--state-url", daemon.url!, "--env", "billing-prod"]);
    expect(validated.code).toBe(1);
    const at = `config/acme.yaml:1:1: ${refusal().replace("OWNED_ELSEWHERE: ", "")}`;
    expect(validated.stdout).toContain(`error[OWNED_ELSEWHERE] ${at}`);
    expect(validated.stdout.match(/OWNED_ELSEWHERE/g)).toHaveLength(1);
    // the annotation a pull request shows at the line
    const github = await job(["validate", path.join(path.dirname(config), "config"), "-c", config, "--state-url", daemon.url!, "--format", "github"]);
    expect(github.stdout).toMatch(/::error file=config\/acme\.yaml,line=1[^\n]*OWNED_ELSEWHERE[^\n]*owned by team payments \(environment payments-prod\)/);
  });

  it("checks as the daemon's owner of each environment: payments' own plan refuses nothing", async () => {
    const dir = await tempRepo({
      "gatesync.yaml": checkoutFile("payments-prod"),
      "config/acme.yaml": orgKey({ name: "acme", keyId: "acme-mr", rate: 150, per: 60 }),
    });
    const planned = await job(["plan", "-c", path.join(dir, "gatesync.yaml"), "--state-url", daemon.url!, "--env", "payments-prod", "--detailed-exitcode"]);
    expect(planned.stdout).not.toContain("OWNED_ELSEWHERE");
    expect(planned.code).toBe(2);
    const validated = await job(["validate", path.join(dir, "config"), "-c", path.join(dir, "gatesync.yaml"), "--state-url", daemon.url!]);
    expect([validated.code, validated.stdout]).toEqual([0, expect.not.stringContaining("OWNED_ELSEWHERE") as unknown]);
  });

  it("fails the plan of a daemon that does not serve its registry (an older one), with the hint; the current daemon does", async () => {
    // the daemon's answers, all but …/ownership (a 404, as a daemon without the route answers)
    const older = createServer((req, res) => {
      if (req.url?.endsWith("/ownership") === true) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
        return;
      }
      void fetch(`${daemon.url!}${req.url ?? "/"}`, { headers: { authorization: req.headers.authorization ?? "" } }).then(async (r) => {
        res.writeHead(r.status, { "content-type": "application/json" }).end(await r.text());
      });
    });
    await new Promise<void>((resolve) => older.listen(0, "127.0.0.1", resolve));
    try {
      const config = await billingCheckout();
      const address = `http://127.0.0.1:${(older.address() as AddressInfo).port}`;
      const refused = await job(["plan", "-c", config, "--state-url", address, "--env", "billing-prod"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("the daemon does not serve its ownership registry (404)");
      expect(refused.stderr).toContain("GET /environments/NAME/ownership");
      expect(refused.stdout).not.toContain("OrgKey/own");
    } finally {
      await new Promise((resolve) => older.close(resolve));
    }
    // the hint followed: this gatesync's daemon serves it, and the plan is made
    const config = await billingCheckout();
    expect((await job(["plan", "-c", config, "--state-url", daemon.url!, "--env", "billing-prod", "--detailed-exitcode"])).code).toBe(3);
  });

  it("fails the plan, saying why, when the daemon refuses the token; validate warns and validates the rest", async () => {
    const config = await billingCheckout();
    const refused = await job(["plan", "-c", config, "--state-url", daemon.url!, "--env", "billing-prod"], "wrong-token");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("the token was refused (401)");
    // validate says it could not check, and validates the rest
    const validated = await job(["validate", path.join(path.dirname(config), "config"), "-c", config, "--state-url", daemon.url!], "wrong-token");
    expect(validated.code).toBe(0);
    expect(validated.stdout).toContain("the ownership registry was not read, so objects other teams own were not checked:");
    expect(validated.stdout).toContain("the token was refused (401)");
    expect(validated.stdout).not.toContain("OWNED_ELSEWHERE");
  });
});
