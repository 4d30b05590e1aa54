/**
 * The owners of gatesync.yaml's settings have one definition: the lists the daemon goes by
 * (settings-owners.ts) are the schema's `x-owner` annotations, which editors and the docs show.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  environmentOperatorSettings,
  environmentTeamSettings,
  ignoredSettings,
  operatorRuleSettings,
  topLevelOperatorSettings,
  topLevelTeamSettings,
} from "../../src/config/settings-owners.js";
import { parseAllDocuments } from "yaml";
import { SchemaRegistry } from "../../src/validate/schema/schema-registry.js";
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
    // what a daemon drops of a repository's file before reading its team settings: every operator setting
    expect(
      owned(schema.properties, "operator")
        .filter((k) => k !== "environments")
        .sort(),
    ).toEqual([...topLevelOperatorSettings].sort());
    expect(owned(environment, "operator").sort()).toEqual([...environmentOperatorSettings].sort());
  });

  it("names the value in force without a URL's user information", () => {
    const [found, ...rest] = ignoredSettings(
      { targets: { gateway: { url: "http://127.0.0.1:9" } } },
      { targets: { gateway: { url: "https://ops:s3cr3t-pw@gw.example.com/admin" } } },
      { file: "gatesync.yaml", locate: () => ({ line: 3, column: 23 }), removable: () => false },
    );
    expect(rest).toEqual([]);
    expect(found).toMatchObject({ severity: "info", code: "CONFIG_SETTING_IGNORED", file: "gatesync.yaml", line: 3, path: "targets.gateway.url" });
    expect(found!.message).toBe("targets.gateway.url is an operator setting: the daemon ignores it and keeps its own, https://gw.example.com/admin");
  });

  it("the Kubernetes examples' ConfigMaps hold the operator's settings only, and pass the schema", () => {
    for (const name of ["gatesync.yaml", "gatesync-postgres-ha.yaml"]) {
      const manifests = parseAllDocuments(readFileSync(path.join(projectRoot, "examples/k8s", name), "utf8")).map((d) => d.toJS() as Record<string, unknown>);
      const configMap = manifests.find((m) => m.kind === "ConfigMap") as { data: Record<string, string> };
      const config = parseAllDocuments(configMap.data["gatesync.yaml"]!)[0]!.toJS() as Record<string, unknown>;
      expect(new SchemaRegistry().validate("gatesync-config.schema.json", config), name).toEqual([]);
      expect(
        Object.keys(config).filter((k) => topLevelTeamSettings.includes(k)),
        name,
      ).toEqual([]);
    }
  });
});
