/**
 * Hostile input: each bad input, dropped into an otherwise valid copy of the examples, gets a
 * clear, located error, and nothing is applied. The webhook receiver refuses what it must and
 * keeps serving while slow clients dawdle.
 */
import { mkdir, open, symlink, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import { stringify } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { Agent } from "undici";
import { DaemonMetrics } from "../../src/daemon/metrics/metrics.js";
import { Reconciler } from "../../src/daemon/loop/reconciler.js";
import { startDaemonServer } from "../../src/daemon/http/server.js";
import { implicitEnvironment } from "../helpers/served-environment.js";
import { ValidationFailed } from "../../src/errors.js";
import { silentLogger } from "../../src/logger.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { LocalSource } from "../../src/source/local-source.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { harness } from "../helpers/apply.js";
import { doc } from "../helpers/plan.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

interface Hostile {
  readonly name: string;
  readonly code: string;
  /** Writes the hostile input into the resource directory (and may use the repository root). */
  readonly plant: (config: string, repo: string) => Promise<void>;
}

const bomb = [
  "a: &a [x, x, x, x, x, x, x, x, x, x]",
  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
  "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
].join("\n");

const inputs: Hostile[] = [
  { name: "an alias bomb", code: "YAML_ALIAS_LIMIT", plant: (c) => writeFile(path.join(c, "bomb.yaml"), bomb) },
  {
    name: "a 50 MB file",
    code: "FILE_TOO_LARGE",
    plant: async (c) => {
      const f = await open(path.join(c, "huge.yaml"), "w");
      await f.truncate(50 * 1024 * 1024);
      await f.close();
    },
  },
  { name: "10,000-deep nesting", code: "YAML_TOO_DEEP", plant: (c) => writeFile(path.join(c, "deep.yaml"), `${"[".repeat(10_000)}${"]".repeat(10_000)}`) },
  {
    name: "a binary file",
    code: "FILE_NOT_TEXT",
    plant: (c) => writeFile(path.join(c, "image.yaml"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d])),
  },
  {
    name: "invalid UTF-8",
    code: "FILE_NOT_TEXT",
    plant: (c) =>
      writeFile(
        path.join(c, "latin1.yaml"),
        Buffer.concat([
          Buffer.from("apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: caf"),
          Buffer.from([0xe9]),
          Buffer.from(" }\nspec: { keyId: k }\n"),
        ]),
      ),
  },
  {
    name: "a symbolic link leaving the repository",
    code: "PATH_ESCAPE",
    plant: async (c, repo) => {
      await writeFile(path.join(repo, "..", "outside.yaml"), doc("OrgKey", "outside", "keyId: outside"));
      await symlink(path.join(repo, "..", "outside.yaml"), path.join(c, "link.yaml"));
    },
  },
  {
    name: "path traversal in definitionFile",
    code: "PATH_ESCAPE",
    plant: (c) => writeFile(path.join(c, "evil-api.yaml"), doc("ApiDefinition", "evil", "apiId: petstore-v1\ndefinitionFile: ../../../../../../etc/passwd")),
  },
  {
    name: "path traversal in ${file:}",
    code: "PATH_ESCAPE",
    plant: (c) => writeFile(path.join(c, "evil-key.yaml"), doc("OrgKey", "evil", "keyId: evil\nhmac_string: ${file:../../../../../etc/shadow}")),
  },
  {
    name: "duplicate keys",
    code: "YAML_DUPLICATE_KEY",
    plant: (c) => writeFile(path.join(c, "dup.yaml"), "apiVersion: gatesync.dev/v1\nkind: OrgKey\nkind: OrgKey\nmetadata: { name: d }\nspec: { keyId: d }\n"),
  },
  {
    name: "a BOM and CRLF with an error inside",
    code: "SCHEMA_VIOLATION",
    plant: (c) => writeFile(path.join(c, "windows.yaml"), `\ufeff${doc("OrgKey", "win", "keyId: win\nrate: fast")}`.replace(/\n/g, "\r\n")),
  },
  { name: "a document that is not a resource", code: "NOT_A_RESOURCE", plant: (c) => writeFile(path.join(c, "notes.yaml"), "- just\n- a list\n") },
  { name: "an unknown kind", code: "UNKNOWN_KIND", plant: (c) => writeFile(path.join(c, "kind.yaml"), doc("Gateway", "g", "x: 1")) },
];

describe("hostile input", () => {
  it.each(inputs)(
    "refuses $name with $code, located, and applies nothing",
    async (input) => {
      const h = await harness();
      try {
        await input.plant(path.join(h.dir, "config"), h.dir);
        const err = await h.apply().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ValidationFailed);
        const found = (err as ValidationFailed).diagnostics.filter((d) => d.code === input.code && d.severity === "error");
        expect(found.length, JSON.stringify((err as ValidationFailed).diagnostics)).toBeGreaterThan(0);
        for (const d of found) expect(d.file).toBeDefined();
        expect(h.sandbox.inspect.calls().log).toEqual([]);
        expect((await h.state.read()).resources.size).toBe(0);
      } finally {
        await h.stop();
      }
    },
    60_000,
  );

  it("never throws or hangs on random structures written as resources", async () => {
    const dir = await tempRepo();
    const validator = new RepositoryValidator();
    const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 60);
    let located = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.anything(),
            fc.record({
              apiVersion: fc.constant("gatesync.dev/v1"),
              kind: fc.constantFrom("OrgKey", "ApiDefinition", "PortalWebhook"),
              metadata: fc.anything(),
              spec: fc.anything(),
            }),
          ),
          { maxLength: 4 },
        ),
        async (docs) => {
          const text = docs
            .map((d) => {
              try {
                return stringify(d);
              } catch {
                return "x: 1\n";
              }
            })
            .join("---\n");
          await writeFile(path.join(dir, "fuzz.yaml"), text);
          const r = await validator.validate({ root: dir });
          for (const d of r.diagnostics) {
            expect(d.file).toBe("fuzz.yaml");
            if (d.line !== undefined) located++;
          }
        },
      ),
      { numRuns: runs },
    );
    expect(located).toBeGreaterThan(0);
    process.stdout.write(`hostile input: ${inputs.length} hand-made inputs, ${runs} random structures\n`);
  }, 120_000);
});

describe("the webhook receiver", () => {
  it("cuts off slow clients and keeps serving others meanwhile", async () => {
    const dir = await tempRepo({ "config/k.yaml": doc("OrgKey", "k", "keyId: k") });
    await mkdir(path.join(dir, "state"));
    const state = new SqliteStateBackend(path.join(dir, "state/state.db"));
    const dispatcher = new Agent();
    const config = (await import("../../src/config/config.js")).configFromDocument(
      { apiVersion: "gatesync.dev/v1", kind: "GatesyncConfig", source: { directory: "./config" }, targets: {} },
      undefined,
      dir,
    );
    const reconciler = new Reconciler({
      config,
      configHash: "h",
      source: new LocalSource(path.join(dir, "config")),
      state,
      validator: new RepositoryValidator(),
      env: {},
      logger: silentLogger(),
      dispatcher,
      metrics: new DaemonMetrics(),
    });
    const server = await startDaemonServer({
      listen: "127.0.0.1:0",
      reconciler,
      environments: implicitEnvironment({ reconciler, state, config }),
      metrics: new DaemonMetrics(),
      logger: silentLogger(),
      webhookSecret: "s",
    });
    try {
      const url = new URL(server.url);
      // slowloris: headers trickle in a byte at a time
      const slow = connect(Number(url.port), url.hostname);
      let closed = false;
      slow.on("close", () => (closed = true));
      slow.on("error", () => undefined);
      slow.write("POST /hooks/git HTTP/1.1\r\nHost: x\r\n");
      const started = Date.now();
      const drip = setInterval(() => slow.write("X"), 200);
      // others are served meanwhile
      for (let i = 0; i < 5; i++) {
        expect((await call(`${server.url}/healthz`)).status).toBe(200);
        await sleep(100);
      }
      while (!closed && Date.now() - started < 15_000) await sleep(100);
      clearInterval(drip);
      expect(closed).toBe(true);
      expect(Date.now() - started).toBeLessThan(12_000);
      expect((await call(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
      await dispatcher.close();
    }
  }, 30_000);
});
