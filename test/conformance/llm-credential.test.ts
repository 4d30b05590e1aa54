/**
 * Issue 30, point 1: each production service takes its credential in its own scheme. The LLM
 * service splits `Authorization` on a space and needs exactly two parts (`Bearer <key>`): the
 * sandbox refuses a bare key with 401 as production does, and gatesync's own call is a 201.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ValidationFailed } from "../../src/errors.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { doc } from "../helpers/plan.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { writeFile } from "node:fs/promises";
import path from "node:path";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe("the LLM service's credential", () => {
  it("is refused as a bare key (401) and accepted as `Bearer <key>` (201) by the sandbox", async () => {
    const sb = await testSandbox();
    try {
      const post = (authorization: string | undefined): ReturnType<typeof call> =>
        call(`${sb.urls.llm}/llm-settings`, { method: "POST", headers: authorization === undefined ? {} : { authorization }, body: {} });
      expect(await post(testCredentials.llmKey)).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
      expect(await post(`Bearer ${testCredentials.llmKey} extra`)).toMatchObject({ status: 401 });
      expect(await post("Bearer wrong-key")).toMatchObject({ status: 401 });
      expect(await post(undefined)).toMatchObject({ status: 401 });
      expect(await post(`Bearer ${testCredentials.llmKey}`)).toMatchObject({ status: 201 });
      expect(sb.inspect.store.llmSettings.size).toBe(1);
    } finally {
      await sb.stop();
    }
  });

  it("is sent by gatesync as `Bearer <key>` by default: the examples' LLM settings are created (201)", async () => {
    h = await harness({ batch: false });
    const { summary } = await h.apply();
    const llm = summary.applied.filter((id) => id.startsWith("LlmSettings/"));
    expect(llm.length).toBeGreaterThan(0);
    expect(summary.failed).toEqual([]);
    const calls = h.sandbox.inspect.calls().log.filter((c) => c.operation === "createLlmSettings");
    expect(calls.map((c) => c.status)).toEqual(llm.map(() => 201));
    expect(h.sandbox.inspect.store.llmSettings.size).toBe(llm.length);
  });

  it("takes another scheme from gatesync.yaml (authScheme), and an empty one sends the bare key, which the LLM service refuses", async () => {
    h = await harness({ files: { "s.yaml": doc("LlmSettings", "s", "attributes:\n  model_name: m") }, batch: false });
    const config = await h.config();
    expect(config.targets.llm?.authScheme).toBe("Bearer");
    expect(config.targets.dashboard?.authScheme).toBe("Bearer");
    expect(config.targets.portal?.authScheme).toBe("");
    expect(config.targets.gateway?.authScheme).toBe("");
    const file = path.join(h.dir, "gatesync.yaml");
    const { readFile } = await import("node:fs/promises");
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replace("credentialEnv: LLM_KEY,", 'credentialEnv: LLM_KEY, authScheme: "",'));
    const { summary } = await h.apply();
    expect(summary.failed.map((f) => f.id)).toEqual(["LlmSettings/s"]);
    expect(h.sandbox.inspect.store.llmSettings.size).toBe(0);
  });

  it("refuses an authScheme that is not one HTTP token, at its line", async () => {
    h = await harness({ files: {}, batch: false });
    const file = path.join(h.dir, "gatesync.yaml");
    const { readFile } = await import("node:fs/promises");
    await writeFile(file, (await readFile(file, "utf8")).replace("credentialEnv: LLM_KEY,", 'credentialEnv: LLM_KEY, authScheme: "Bearer token",'));
    const err = await h.config().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationFailed);
    const d = (err as ValidationFailed).diagnostics[0]!;
    expect(d).toMatchObject({ path: "targets.llm.authScheme" });
    expect(d.line).toBeGreaterThan(0);
  });
});
