import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderResourceDocs } from "../../scripts/resource-docs.js";
import { projectRoot } from "../helpers/temp-repo.js";

describe("docs/user/resources.md", () => {
  it("is current with the schemas", async () => {
    const committed = await readFile(path.join(projectRoot, "docs/user/resources.md"), "utf8");
    const fresh = renderResourceDocs(path.join(projectRoot, "schemas"));
    expect(committed === fresh, "docs/user/resources.md is out of date with schemas/: run `npm run docs:resources` and commit the result").toBe(true);
  });

  it("documents every kind's fields with type, required, description and enum values", () => {
    const text = renderResourceDocs(path.join(projectRoot, "schemas"));
    for (const kind of ["ApiDefinition", "OAuthClient", "OrgKey", "ClientType", "ApiProduct", "PortalWebhook", "DashboardWebhook", "LlmSettings"])
      expect(text).toContain(`## ${kind}\n`);
    expect(text).toContain(
      "| `spec.apiId` | string | yes | Identifier of the API on the gateway (path parameter apiID of operation 1). One URL path segment: not `.` or `..`, without `/`, `\\`, `?`, `#`, `%`, `{`, `}`, whitespace or control characters (so no secret reference: a secret would travel in the URL). |",
    );
    expect(text).toMatch(/\| `spec\.method` \| string \| yes \| .*One of: `"DELETE"`, `"GET"`, `"PUT"`, `"POST"`, `"PATCH"`\./);
    expect(text).toContain("| `spec.query.listenPath` | string | no | Listen path of the API, e.g. /petstore/. |");
  });
});
