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

type AddressCleaner = (urls: readonly string[]) => Promise<void>;
const cleaners: AddressCleaner[] = [];

/**
 * Registers what clears a sandbox's addresses out of stores that outlive it. The PostgreSQL
 * ownership registry is one table for every test file, keyed by address, and the system hands a
 * stopped sandbox's port to a later one: a row left at it makes that later test's own object
 * "owned elsewhere" (helpers/postgres.ts registers the clean-up; a unit file reaches no
 * PostgreSQL and registers none).
 */
export function onSandboxAddresses(clean: AddressCleaner): void {
  cleaners.push(clean);
}

/**
 * The sandbox's addresses are cleared when it starts (the port is now this sandbox's: whatever
 * is recorded at it was left by one that stopped) and before it stops (while the port is still
 * its own, so no clean-up reaches a later sandbox's rows).
 */
export async function clearedAddresses(box: SandboxHandle): Promise<SandboxHandle> {
  const urls = [box.urls.gateway, box.urls.portal, box.urls.dashboard, box.urls.llm];
  const clear = async (): Promise<void> => {
    for (const clean of cleaners) await clean(urls);
  };
  await clear();
  return {
    ...box,
    stop: async () => {
      await clear();
      await box.stop();
    },
  };
}

export async function testSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  return clearedAddresses(await startSandbox({ credentials: testCredentials, fixtures: await exampleFixtures(), ...options }));
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
