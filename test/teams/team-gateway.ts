/**
 * The sandbox gateway a test file's teams share on PostgreSQL (kept apart from teams-helpers.ts:
 * a file importing this starts a sandbox and reaches PostgreSQL, so it is a services file).
 */
import { afterAll, beforeAll } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { dropTestSchemas } from "../helpers/postgres.js";
import { testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

/**
 * One sandbox gateway for a test file's teams: started before its tests; after them its rows of
 * the PostgreSQL ownership registry, the test schemas and the temporary repositories go.
 */
export function sharedTeamGateway(): { readonly sandbox: SandboxHandle } {
  const held = {} as { sandbox: SandboxHandle };
  beforeAll(async () => {
    held.sandbox = await testSandbox();
  });
  afterAll(async () => {
    await held.sandbox.stop();
    await dropTestSchemas();
    await removeTempRepos();
  });
  return held;
}
