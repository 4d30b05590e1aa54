/**
 * A repository's ruleset is data (docs/user/rules.md, "Rulesets are data"): no member of it —
 * formats, function names, messages, given paths, overrides, aliases, extends, rule names,
 * documentationUrl, functionOptions, parserOptions — is ever run as code. Each payload below
 * tries to write a marker file and to connect to a loopback listener; `gatesync validate`
 * must leave both untouched, and refuse the member that is not valid with a located
 * CONFIG_INVALID.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { Server } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { positionOf, removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** A loopback listener that counts the connections a payload makes. */
let listener: Server;
let connections = 0;
let port = 0;
beforeAll(async () => {
  listener = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

/** Characters the migrator rewrites in a format's name (`.`, `-`), written as escapes in the payload's strings. */
const escaped = (s: string): string => s.replace(/[^A-Za-z0-9/ _]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);

/** JavaScript that writes `marker` and connects to the listener, with no `.` or `-` outside its strings. */
const action = (marker: string): string =>
  `process['getBuiltinModule']('fs')['writeFileSync']('${escaped(marker)}','x');` +
  `process['getBuiltinModule']('net')['connect'](${port},'${escaped("127.0.0.1")}')['on']('error',()=>0)`;

/** The same as plain JavaScript (for a member evaluated as such, e.g. a JSONPath filter). */
const plainAction = (marker: string): string =>
  `process.getBuiltinModule('fs').writeFileSync(${JSON.stringify(marker)},'x');` +
  `process.getBuiltinModule('net').connect(${port},'127.0.0.1').on('error',()=>0)`;

/** A format's name that closes the migrator's `const {…} = require(…)` and runs `code`. */
const formatPayload = (marker: string): string => JSON.stringify(`x} = {}; ${action(marker)}; const {y`);
/** A JSONPath filter that reaches `Function` through `constructor`. */
const givenPayload = (marker: string): string => JSON.stringify(`$..[?(@ && @.constructor.constructor(${JSON.stringify(plainAction(marker))})())]`);
/** Text a template or a code generator might run. */
const textPayload = (marker: string): string => JSON.stringify(`\${${plainAction(marker)}}{{${plainAction(marker)}}}');${plainAction(marker)};//`);

const rule = (extra = "", name = "r"): string => `  ${name}:
    given: "$.spec"
    severity: warn
    then: { function: truthy }
${extra}`;

interface Payload {
  readonly member: string;
  readonly ruleset: (marker: string) => string;
  /** Where the ruleset is refused (the finding's path), or none when the member is valid data. */
  readonly refusedAt?: { readonly path: string; readonly token: string };
}

const payloads: readonly Payload[] = [
  { member: "formats", ruleset: (m) => `formats: [${formatPayload(m)}]\nrules:\n${rule()}`, refusedAt: { path: "formats[0]", token: "formats:" } },
  {
    member: "a rule's formats",
    ruleset: (m) => `rules:\n${rule(`    formats: [oas3, ${formatPayload(m)}]\n`)}`,
    refusedAt: { path: "rules.r.formats[1]", token: "formats:" },
  },
  {
    member: "an override's formats",
    ruleset: (m) => `rules:\n${rule()}overrides:\n  - files: ["**"]\n    formats: [${formatPayload(m)}]\n    rules: { r: error }\n`,
    refusedAt: { path: "overrides[0].formats[0]", token: "formats:" },
  },
  {
    member: "an alias target's formats",
    ruleset: (m) => `aliases:\n  Spec:\n    targets:\n      - formats: [${formatPayload(m)}]\n        given: ["$.spec"]\nrules:\n${rule()}`,
    refusedAt: { path: "aliases.Spec.targets[0].formats[0]", token: "formats:" },
  },
  {
    member: "a function name",
    ruleset: (m) => `rules:\n  r:\n    given: "$.spec"\n    then: { function: ${formatPayload(m)} }\n`,
    refusedAt: { path: "rules.r.then.function", token: "function:" },
  },
  { member: "a message", ruleset: (m) => `rules:\n${rule(`    message: ${textPayload(m)}\n`)}` },
  {
    member: "a given path",
    ruleset: (m) => `rules:\n  r:\n    given: ${givenPayload(m)}\n    then: { function: truthy }\n`,
    refusedAt: { path: "rules.r.given", token: "given:" },
  },
  {
    member: "an alias's given path",
    ruleset: (m) => `aliases:\n  Spec: [${givenPayload(m)}]\nrules:\n  r:\n    given: "#Spec"\n    then: { function: truthy }\n`,
    refusedAt: { path: "aliases.Spec[0]", token: "Spec:" },
  },
  {
    member: "extends",
    ruleset: (m) => `extends: [${formatPayload(m)}]\nrules:\n${rule()}`,
    refusedAt: { path: "extends[0]", token: "extends:" },
  },
  { member: "a rule name", ruleset: (m) => `rules:\n${rule("", textPayload(m))}` },
  {
    member: "documentationUrl",
    ruleset: (m) => `documentationUrl: ${textPayload(m)}\nrules:\n${rule()}`,
    refusedAt: { path: "documentationUrl", token: "documentationUrl:" },
  },
  { member: "description", ruleset: (m) => `description: ${textPayload(m)}\nrules:\n${rule(`    description: ${textPayload(m)}\n`)}` },
  {
    member: "functionOptions",
    ruleset: (m) =>
      `rules:\n  r:\n    given: "$.spec"\n    then: { function: pattern, functionOptions: { match: ${textPayload(m)}, notMatch: ${formatPayload(m)} } }\n`,
    refusedAt: { path: "rules.r.then.functionOptions.match", token: "match:" },
  },
  {
    member: "a schema in functionOptions",
    ruleset: (m) =>
      `rules:\n  r:\n    given: "$.spec"\n    then:\n      function: schema\n      functionOptions:\n        schema: { type: object, properties: { ${textPayload(m)}: { pattern: ${textPayload(m)}, default: ${textPayload(m)} } } }\n`,
  },
  {
    member: "parserOptions",
    ruleset: (m) => `parserOptions: { duplicateKeys: ${formatPayload(m)} }\nrules:\n${rule()}`,
    refusedAt: { path: "parserOptions.duplicateKeys", token: "duplicateKeys" },
  },
  {
    member: "an override's files and rules",
    ruleset: (m) =>
      `rules:\n${rule()}overrides:\n  - files: [${textPayload(m)}]\n    rules: { r: { given: ${givenPayload(m)}, then: { function: truthy } } }\n`,
    refusedAt: { path: "overrides[0].rules.r.given", token: "rules: { r:" },
  },
];

/** The examples' repository with one resource ruleset beside gatesync.yaml. */
async function withRuleset(text: string): Promise<Harness> {
  const made = await harness({ configExtra: "rules: { resources: rules/resources.spectral.yaml }\n" });
  await mkdir(path.join(made.dir, "rules"), { recursive: true });
  await writeFile(path.join(made.dir, "rules/resources.spectral.yaml"), text);
  return made;
}

describe("a repository's ruleset runs no code", { timeout: 120_000 }, () => {
  it.each(payloads)("a payload in $member runs nothing", async ({ ruleset, refusedAt }) => {
    h = await withRuleset("rules: {}\n");
    const marker = path.join(h.dir, "marker");
    const text = ruleset(marker);
    await writeFile(path.join(h.dir, "rules/resources.spectral.yaml"), text);
    const before = connections;
    const r = await runCli(["validate", "--config", path.join(h.dir, "gatesync.yaml")], { ...h.env, GATESYNC_LOG_LEVEL: "silent" });
    // a payload's connection would arrive after the run: give it the time to
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(marker), "the payload wrote its marker file").toBe(false);
    expect(connections - before, "the payload connected to the listener").toBe(0);
    if (refusedAt === undefined) {
      expect(r.stderr).not.toContain("CONFIG_INVALID");
      return;
    }
    expect(r.code).toBe(1);
    const at = positionOf(await readFile(path.join(h.dir, "rules/resources.spectral.yaml"), "utf8"), refusedAt.token);
    const where = new RegExp(
      `error\\[CONFIG_INVALID\\] \\S*rules/resources\\.spectral\\.yaml:${at.line}:\\d+ ${refusedAt.path.replace(/[.[\]]/g, "\\$&")}: ruleset: `,
    );
    expect(r.stderr).toMatch(where);
  });
});
