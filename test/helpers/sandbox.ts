import { readFile } from "node:fs/promises";
import path from "node:path";
import { request } from "undici";
import { parse } from "yaml";
import type { Fixtures } from "../../src/sandbox/fixtures.js";
import { checkFixtures } from "../../src/sandbox/fixtures.js";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import type { SandboxHandle, SandboxOptions } from "../../src/sandbox/sandbox.js";
import { projectRoot } from "./temp-repo.js";

export const testCredentials = { gatewayKey: "test-gw-key", portalKey: "test-portal-key", dashboardToken: "test-dash-token", llmKey: "test-llm-key" };

/** The example fixtures, plus whatever a test adds. */
export async function exampleFixtures(extra: Partial<Fixtures> = {}): Promise<Fixtures> {
  const base = checkFixtures(parse(await readFile(path.join(projectRoot, "examples/sandbox-fixtures.yaml"), "utf8")));
  return {
    ...base,
    ...extra,
    apis: [...(base.apis ?? []), ...(extra.apis ?? [])],
    keys: [...(base.keys ?? []), ...(extra.keys ?? [])],
  };
}

export async function testSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  return startSandbox({ credentials: testCredentials, fixtures: await exampleFixtures(), ...options });
}

export interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** One real HTTP call; the body is parsed as JSON when it is JSON. */
export async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | object } = {}): Promise<Answer> {
  const body = init.body === undefined ? null : typeof init.body === "string" ? init.body : JSON.stringify(init.body);
  const res = await request(url, { method: (init.method ?? "GET") as "GET", headers: init.headers ?? {}, body });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, body: parsed, text, headers: res.headers };
}

export const gw = { "x-gw-authorization": testCredentials.gatewayKey };
export const portal = { authorization: testCredentials.portalKey };
export const dash = { authorization: `Bearer ${testCredentials.dashboardToken}` };
export const llm = { authorization: `Bearer ${testCredentials.llmKey}` };
