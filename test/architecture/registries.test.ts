/**
 * The kind registry and the interface registry are the one place kinds and interfaces are
 * named: what plans, applies, pages and the config do per kind or per interface follows from
 * them. Proved in-process — an extra interface registered, kind hooks changed — without any
 * other edit, and kept so by reading src/ for lists written by hand.
 */
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Agent } from "undici";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openInterfaces } from "../../src/apply/clients.js";
import { renderSummary } from "../../src/apply/summary.js";
import type { ApplySummary } from "../../src/apply/types.js";
import type { RunReport } from "../../src/run/run-report.js";
import { configFromDocument } from "../../src/config/config.js";
import { managementInterfaces } from "../../src/contract/interfaces.js";
import type { InterfaceName, ManagementInterface } from "../../src/contract/interfaces.js";
import type { OperationSpec } from "../../src/contract/operations.js";
import { runsPage } from "../../src/daemon/ui/runs-page.js";
import { breaking } from "../../src/kinds/breaking/types.js";
import type { KindModule } from "../../src/kinds/kind.js";
import { adoptableKinds, allKinds, kindModule, providedApiIds } from "../../src/kinds/registry.js";
import { createLogger } from "../../src/logger.js";
import { countCalls } from "../../src/plan/plan.js";
import type { Plan } from "../../src/plan/plan.js";
import type { PlannedChange } from "../../src/plan/plan-change.js";
import { callsLine } from "../../src/plan/render/render-shared.js";
import { credentialVariables } from "../../src/config/credentials.js";
import { painter } from "../../src/text/style.js";
import { desiredFrom, doc, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { projectRoot, removeTempRepos } from "../helpers/temp-repo.js";
import { HeldValue } from "../../src/deferred.js";
import { applySummary } from "../helpers/apply-summary.js";

afterAll(removeTempRepos);

/** A fifth interface, registered for one test and removed after it. */
const mail = {
  name: "mail",
  title: "Mail",
  credentialHeader: "x-mail-key",
  defaultAuthScheme: "Token",
  credentialEnvKey: "keyEnv",
} as const satisfies ManagementInterface;
const mailName = mail.name as string as InterfaceName;
const registered = managementInterfaces as unknown as ManagementInterface[];

function registerMail(): void {
  registered.push(mail);
}

afterEach(() => {
  const at = registered.indexOf(mail);
  if (at >= 0) registered.splice(at, 1);
});

const mailOperation: OperationSpec = { number: 99, interface: mailName, method: "POST", path: "/letters", idempotent: false, batchable: false };

function mailConfig(url: string): ReturnType<typeof configFromDocument> {
  const document = { apiVersion: "gatesync.dev/v1", kind: "GatesyncConfig", source: { directory: "." }, targets: { mail: { url, keyEnv: "MAIL_KEY" } } };
  return configFromDocument(document, undefined, projectRoot);
}

const change = (id: string): PlannedChange => ({ id, action: "create", wave: 0, operation: mailOperation }) as unknown as PlannedChange;

describe("the interface registry", () => {
  it("gives a registered interface its target, its credential, its calls and its place in every call line", async () => {
    registerMail();
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on("end", () => res.writeHead(201, { "content-type": "application/json" }).end("{}"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const dispatcher = new Agent();
    try {
      const config = mailConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      // the target section, read by the registry's key for the credential variable and its default scheme
      expect(config.targets[mailName]).toMatchObject({ credentialEnv: "MAIL_KEY", authScheme: "Token" });
      // gatesync's own credentials: a resource may never reference the variable
      expect(credentialVariables(config)).toContainEqual({ name: "MAIL_KEY", setting: "targets.mail.keyEnv" });

      const logger = createLogger({ level: "silent" });
      expect(() => openInterfaces([change("Letter/a")], { config, env: {}, dispatcher }, logger)).toThrow(/environment variable MAIL_KEY is not set/);
      const open = openInterfaces([change("Letter/a")], { config, env: { MAIL_KEY: "sealed" }, dispatcher }, logger);
      const outcome = await open
        .queue(mailName)
        .run(() => open.client(mailName).call({ method: "POST", path: "/letters", body: {} }), new AbortController().signal);
      expect(outcome.kind).toBe("answered");
      expect(seen.map((h) => h["x-mail-key"])).toEqual(["Token sealed"]);
      expect(open.started(mailName)).toBe(1);

      const counts = countCalls([change("Letter/a"), change("Letter/b")], undefined);
      expect(counts).toEqual({ gateway: 0, portal: 0, dashboard: 0, llm: 0, mail: 2, batchCalls: 0, batched: 0, total: 2 });
      expect(callsLine({ summary: { calls: counts } } as unknown as Plan)).toBe("2 HTTP calls (gateway 0, portal 0, dashboard 0, llm 0, mail 2)");

      const applied: ApplySummary = {
        ...applySummary(),
        calls: { ...counts, checks: 0, retries: 0, pauses: 0 },
      };
      expect(renderSummary(applied, painter(false))).toContain("Calls: gateway 0, portal 0, dashboard 0, llm 0, mail 2; 0 retries, 0 pauses for Retry-After.");
      const record = {
        kind: "run" as const,
        trigger: report.reason,
        outcome: report.result,
        counts: { applied: 0, failed: 0, inDoubt: 0, blocked: 0, skipped: 0, changes: 0, calls: 2 },
        durationMs: report.durationMs,
        startedAt: report.startedAt,
        finishedAt: report.finishedAt,
        replica: "test",
        synced: true,
        report: { ...report, summary: applied },
        changes: [],
      };
      const page = runsPage([{ seq: 1, record, repeats: 0, firstAt: report.startedAt, lastAt: report.startedAt }]).text;
      expect(page).toContain("<th>Calls (gateway / portal / dashboard / LLM / Mail)</th>");
      expect(page).toContain("<td>0 / 0 / 0 / 0 / 2</td>");
    } finally {
      await dispatcher.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

const report = {
  result: "applied",
  reason: "schedule",
  startedAt: "2026-11-24T00:00:00.000Z",
  durationMs: 5,
  commit: "0123456789abcdef0123456789abcdef01234567",
} as unknown as RunReport;

/** Sets hooks on a registered kind module for one test; `undefined` removes one. */
function withHooks<K extends string>(kind: KindModule<K>, hooks: { readonly [P in keyof KindModule<K>]?: KindModule<K>[P] | undefined }): () => void {
  const target = kind as unknown as Record<string, unknown>;
  const saved = Object.fromEntries(Object.keys(hooks).map((k) => [k, Object.getOwnPropertyDescriptor(target, k)]));
  for (const [k, v] of Object.entries(hooks)) {
    if (v === undefined) delete target[k];
    else target[k] = v;
  }
  return () => {
    for (const [k, d] of Object.entries(saved)) {
      if (d === undefined) delete target[k];
      else Object.defineProperty(target, k, d);
    }
  };
}

const webhook = (url: string): string => doc("PortalWebhook", "crm", `Name: CRM\nURL: ${url}\nMethod: POST\nTimeout: 5\nEvents: [UserRegistered]`);
const llm = (annotation: string): string =>
  doc("LlmSettings", "assistant", "attributes: { model_name: m }").replace(
    "  name: assistant\n",
    `  name: assistant\n  annotations:\n    gatesync.dev/adopt: "${annotation}"\n`,
  );

describe("the kind hooks", () => {
  it("classify a kind's updates in the plan when, and only when, its module says how", async () => {
    const before = await desiredFrom({ "hook.yaml": webhook("https://crm.example.com/a") });
    const state = recordPlan(planFor(before), before.desired, emptyState);
    const after = await desiredFrom({ "hook.yaml": webhook("https://crm.example.com/b") });
    expect(planFor(after, state).changes[0]).toMatchObject({ action: "update" });
    expect(planFor(after, state).changes[0]?.breaking).toBeUndefined();
    const restore = withHooks(kindModule("PortalWebhook"), { classifyUpdate: (b, a) => (b.URL === a.URL ? [] : [breaking("URL", "events go elsewhere")]) });
    try {
      expect(planFor(after, state).changes[0]).toMatchObject({ action: "update", breaking: [{ path: "URL", reason: "events go elsewhere" }] });
    } finally {
      restore();
    }
  });

  it("make a kind adoptable exactly when its module says the server names its objects", async () => {
    const set = await desiredFrom({ "llm.yaml": llm("llm-7") });
    expect(planFor(set).changes[0]).toMatchObject({ action: "adopt", adopt: { serverId: "llm-7" } });
    expect(adoptableKinds()).toContain("LlmSettings");
    const restore = withHooks(kindModule("LlmSettings"), { serverId: undefined });
    try {
      expect(adoptableKinds()).not.toContain("LlmSettings");
      expect(planFor(set).changes[0]).toMatchObject({ action: "blocked", reason: expect.stringContaining("LlmSettings cannot be adopted") as unknown });
    } finally {
      restore();
    }
  });

  it("take the API ids references resolve to from the kinds that provide them", () => {
    const resources = [{ kind: "PortalWebhook", name: "crm", spec: new HeldValue<Readonly<Record<string, unknown>>>({ apiId: "not-an-api" }) }];
    expect(providedApiIds(resources)).toEqual(new Map());
    const restore = withHooks(kindModule("PortalWebhook"), { providedApiId: (spec) => String(spec.apiId) });
    try {
      expect(providedApiIds(resources)).toEqual(new Map([["crm", "not-an-api"]]));
    } finally {
      restore();
    }
  });
});

/** Files of src/ (relative, `/`-separated) with their text. */
async function sources(dir = path.join(projectRoot, "src")): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push([path.relative(path.join(projectRoot, "src"), file).split(path.sep).join("/"), await readFile(file, "utf8")]);
  }
  return out;
}

/**
 * Where names may be written: each kind's module and the interface registry name themselves;
 * the sandbox describes the interfaces on its own (so that it and gatesync cannot be wrong
 * together), and the commands that present it print its addresses; the generated validators
 * and the `init` templates are documents, not code.
 */
const namingModules = [
  /^kinds\//,
  /^contract\//,
  /^sandbox\//,
  /^validate\/compiled\//,
  /^init\/templates\.ts$/,
  /^cli\/commands\/(sandbox|demo)\/(command|action)\.ts$/,
];

describe("no list written by hand", () => {
  it("names no kind as a string outside the kind modules", async () => {
    const quoted = new RegExp(
      `["'\`](${allKinds()
        .map((k) => k.kind)
        .join("|")})["'\`]`,
      "g",
    );
    const found = (await sources())
      .filter(([file]) => !namingModules.some((m) => m.test(file)))
      .flatMap(([file, text]) => [...text.matchAll(quoted)].map((m) => `${file}: ${m[0]}`));
    expect(found).toEqual([]);
  });

  it("names no interface as a string, nor reads three or more of them member by member, outside the registry", async () => {
    const names = managementInterfaces.map((i) => i.name).join("|");
    const quoted = new RegExp(`["'\`](${names})["'\`]`, "g");
    const member = new RegExp(`\\.(${names})\\b`, "g");
    const found: string[] = [];
    for (const [file, text] of await sources()) {
      if (namingModules.some((m) => m.test(file))) continue;
      found.push(...[...text.matchAll(quoted)].map((m) => `${file}: ${m[0]}`));
      // one interface's own settings (`targets.gateway.batch`) are fine; a list of them is not
      const members = new Set([...text.matchAll(member)].map((m) => m[1]));
      if (members.size >= 3) found.push(`${file}: reads ${[...members].join(", ")} one by one`);
    }
    expect(found).toEqual([]);
  });

  it("publishes plans whose call counts are the registry's interfaces", async () => {
    const schema = JSON.parse(await readFile(path.join(projectRoot, "schemas/plan.schema.json"), "utf8")) as {
      properties: { summary: { properties: { calls: { required: string[] } } } };
    };
    const required = schema.properties.summary.properties.calls.required;
    expect(required.filter((k) => !["batchCalls", "batched", "total"].includes(k))).toEqual(managementInterfaces.map((i) => i.name));
  });
});
