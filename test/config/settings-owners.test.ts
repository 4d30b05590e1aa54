/**
 * The owners of gatesync.yaml's settings have one definition: the lists the daemon goes by
 * (settings-owners.ts) are the schema's `x-owner` annotations, which editors and the docs show.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { environmentTeamSettings, operatorRuleSettings, topLevelTeamSettings } from "../../src/config/settings-owners.js";
import { projectRoot } from "../helpers/temp-repo.js";

type Properties = Record<string, { "x-owner"?: string; properties?: Properties }>;
const schema = JSON.parse(readFileSync(path.join(projectRoot, "schemas", "gatesync-config.schema.json"), "utf8")) as {
  properties: Properties;
  $defs: { environment: { properties: Properties } };
};
const owned = (properties: Properties, owner: string): string[] =>
  Object.entries(properties)
    .filter(([, p]) => p["x-owner"] === owner)
    .map(([k]) => k);

describe("who decides each setting", () => {
  it("gives every setting an owner, and the team's are the ones the daemon reads from the commit", () => {
    const top = Object.keys(schema.properties).filter((k) => k !== "apiVersion" && k !== "kind");
    expect(top.filter((k) => schema.properties[k]!["x-owner"] === undefined)).toEqual([]);
    expect(owned(schema.properties, "team").sort()).toEqual([...topLevelTeamSettings].sort());
    const environment = schema.$defs.environment.properties;
    expect(Object.keys(environment).filter((k) => environment[k]!["x-owner"] === undefined)).toEqual([]);
    expect(owned(environment, "team").sort()).toEqual([...environmentTeamSettings].sort());
    expect(owned(schema.properties.rules!.properties!, "operator")).toEqual([...operatorRuleSettings]);
  });
});
