/**
 * `gatesync validate` warns where an ApiDefinition's post-apply checks cannot be answered
 * (docs/user/promotion.md, "What a check needs"): they run through the API's batch route below
 * its listen path, so a resource without a listen path, or whose document turns batch
 * processing off, would fail every check after each apply. A warning: the commit still applies.
 */
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const api = (query: string, extension: string): string =>
  `${doc(
    "ApiDefinition",
    "petstore",
    `apiId: petstore-v1\ndefinition:\n  openapi: 3.0.3\n  info: { title: petstore, version: "1" }\n  servers: [{ url: "http://up.internal:8080" }]\n${extension}  paths: {}`,
  )}${query}  verify:\n    - path: pets\n`;

const extensionOff = `  x-gw-api-gateway:\n    info: { name: petstore, state: { active: true } }\n    upstream: { url: "http://up.internal:8080" }\n    server: { listenPath: { value: /petstore/ }, batchProcessing: { enabled: false } }\n`;

describe("validate and checks that cannot be answered", () => {
  it("warns of checks without a listen path, and of a batch route the document turns off; a healthy set-up has no warning", async () => {
    const none = await tempRepo({ "api.yaml": api("", "") });
    const noListen = await runCli(["validate", none]);
    expect(noListen.code).toBe(0);
    expect(noListen.stdout + noListen.stderr).toContain("the checks run at the API's batch route below its listen path, which this resource does not give");

    const off = await tempRepo({ "api.yaml": api("", extensionOff) });
    const batchOff = await runCli(["validate", off]);
    expect(batchOff.code).toBe(0);
    expect(batchOff.stdout + batchOff.stderr).toContain("which the document turns off (x-gw-api-gateway.server.batchProcessing.enabled: false)");

    const fine = await tempRepo({ "api.yaml": api("  query: { listenPath: /petstore/ }\n", "") });
    const healthy = await runCli(["validate", fine]);
    expect(healthy.code).toBe(0);
    expect(healthy.stdout + healthy.stderr).not.toContain("batch route");
  });
});
