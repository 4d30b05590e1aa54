/**
 * Writes the code cache of each script given — the CLI's, the compiled validators', `yaml`'s and
 * `commander`'s (bundle.ts runs this in a process of its own): with the launcher's V8 flags, as
 * `bin/gatesync.js` sets them, since V8 refuses a cache made under other flags. Each script runs
 * first as it is used (the CLI on the commands users start most, each validator on a few typical
 * values: below), so that the cache holds the functions they reach, compiled, and not only the
 * script's top level: V8 compiles a function when it is first called.
 */
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type * as CommanderModule from "commander";
import type * as YamlModule from "yaml";
import type { CliIo } from "../../src/cli/common/cli-io.js";
import { runScript } from "../../bin/script-loader.js";
import { applyStartupFlags } from "../../bin/v8-flags.js";

applyStartupFlags();

/** An operation as most documents have them: parameters, a request body, responses with schemas. */
const operation = {
  operationId: "getThing",
  summary: "a thing",
  tags: ["things"],
  parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
  requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } } },
  responses: { "200": { description: "ok", content: { "application/json": { schema: { type: "array", items: { $ref: "#/components/schemas/Thing" } } } } } },
  security: [{ key: [] }],
};

/** What the validators meet: OpenAPI 3.0 and 3.1 documents with the gateway's extension, and a resource. */
const samples = ["3.0.3", "3.1.0"].map((openapi) => ({
  openapi,
  info: { title: "Things", version: "1.0.0", description: "things" },
  servers: [{ url: "https://api.example.com/v1" }],
  paths: { "/things/{id}": { get: operation, post: { ...operation, operationId: "postThing" } } },
  components: {
    schemas: { Thing: { type: "object", required: ["id"], properties: { id: { type: "string", format: "uuid" }, size: { type: "integer", minimum: 0 } } } },
    securitySchemes: { key: { type: "apiKey", in: "header", name: "X-Key" } },
  },
  "x-gw-api-gateway": { upstream: { url: "http://things.internal" } },
}));
const resource = { apiVersion: "gatesync.dev/v1", kind: "Thing", metadata: { name: "thing", labels: { team: "things" } }, spec: {} };

/** The validation functions among a module's exports (a function, or a table of them). */
type Validate = (value: unknown) => unknown;

function validatorsIn(exports: Record<string, unknown>): Validate[] {
  const values = Object.values(exports).flatMap((v): unknown[] => (v !== null && typeof v === "object" ? Object.values(v) : [v]));
  return values.filter((v): v is Validate => typeof v === "function");
}

/** YAML as resources and OpenAPI documents are written: block and flow collections, scalars of each kind, comments, several documents. */
const yamlSample = `# a resource
apiVersion: gatesync.dev/v1
kind: OrgKey
metadata: { name: acme, labels: { team: "storefront" } }
spec:
  keyId: 'org-acme'
  rate: 100
  per: 1.5
  active: true
  expires: null
  tags: [a, b]
  note: |
    two
    lines
---
openapi: 3.0.3
paths:
  /things/{id}:
    get:
      responses:
        "200":
          description: >-
            folded
            text
`;

/** Runs yaml as gatesync's reader does (src/load/yaml-reader.ts): a parser fed to a composer, values out. */
function exerciseYaml(yaml: Record<string, unknown>): void {
  const y = yaml as unknown as typeof YamlModule;
  const lineCounter = new y.LineCounter();
  const composer = new y.Composer({ uniqueKeys: true, prettyErrors: false, strict: true });
  for (const doc of composer.compose(new y.Parser(lineCounter.addNewLine).parse(yamlSample))) doc.toJS();
  for (const doc of y.parseAllDocuments(yamlSample, { lineCounter, prettyErrors: false })) doc.toJS();
  y.parse(yamlSample.split("---")[0]!);
}

/** Declares and parses a command as gatesync's CLI does (src/cli.ts), its help included. */
async function exerciseCommander(commander: Record<string, unknown>): Promise<void> {
  const c = commander as unknown as typeof CommanderModule;
  const program = new c.Command("gatesync").exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  program
    .command("validate")
    .argument("[dir]", "a directory")
    .option("-c, --config <file>", "a file")
    .addOption(new c.Option("--format <format>", "a format").choices(["text", "json"]).default("text"))
    .action(() => undefined);
  program.helpInformation();
  await program.parseAsync(["node", "gatesync", "validate", "dir", "--format", "json"]);
}

const root = path.resolve(import.meta.dirname, "../..");

/** The commands users start most, as the launcher runs them, their output dropped: help, and validate and plan of the examples. */
async function exerciseCli(cli: Record<string, unknown>): Promise<void> {
  const main = cli.main as (argv: readonly string[], io: CliIo) => Promise<void>;
  const io: CliIo = { stdout: () => undefined, stderr: () => undefined, env: {}, isTty: false };
  const examples = path.join(root, "examples/config");
  const before = process.exitCode;
  for (const args of [["--help"], ["validate", "--help"], ["validate", examples], ["plan", "--dir", examples, "--help"]])
    await main(["node", "gatesync", ...args], io);
  process.exitCode = before;
}

for (const file of process.argv.slice(2)) {
  await rm(`${file}.v8cache`, { force: true });
  const { exports, script } = runScript(file);
  if (file.endsWith(`${path.sep}cli.cjs`)) await exerciseCli(exports);
  else if (file.endsWith(`${path.sep}yaml.cjs`)) exerciseYaml(exports);
  else if (file.endsWith(`${path.sep}commander.cjs`)) await exerciseCommander(exports);
  else for (const validate of validatorsIn(exports)) for (const value of [{}, resource, ...samples, samples[0]!["x-gw-api-gateway"]]) validate(value);
  await writeFile(`${file}.v8cache`, script.createCachedData());
}
