/**
 * The daemon's HTTP server address: what `server.listen` and `--listen` accept, and a clear
 * error (not an internal one) when the address is malformed or taken.
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Agent } from "undici";
import { configFromDocument } from "../../src/config/config.js";
import { DaemonMetrics } from "../../src/daemon/metrics/metrics.js";
import { Reconciler } from "../../src/daemon/loop/reconciler.js";
import { parseListen, startDaemonServer } from "../../src/daemon/http/server.js";
import { implicitEnvironment } from "../helpers/served-environment.js";
import { ConfigError } from "../../src/errors.js";
import { silentLogger } from "../../src/logger.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { LocalSource } from "../../src/source/local-source.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { runCli } from "../helpers/cli.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("the daemon server's address", () => {
  it("accepts HOST:PORT, [IPv6]:PORT and a bare port, and refuses anything else", () => {
    expect(parseListen("127.0.0.1:9464")).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(parseListen("[::1]:9464")).toEqual({ host: "::1", port: 9464 });
    expect(parseListen("0.0.0.0:0")).toEqual({ host: "0.0.0.0", port: 0 });
    expect(parseListen("localhost:80")).toEqual({ host: "localhost", port: 80 });
    expect(parseListen("9464")).toEqual({ host: "127.0.0.1", port: 9464 });
    for (const bad of ["nonsense", "127.0.0.1", "host:port", ":9464", "127.0.0.1:70000", "::1:9464", "a b:1"]) {
      expect(() => parseListen(bad), bad).toThrow(ConfigError);
    }
  });

  it("says the port is taken, as a configuration error", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = `127.0.0.1:${(blocker.address() as AddressInfo).port}`;
    const dir = await tempRepo({ "config/.keep": "" });
    const state = new SqliteStateBackend(path.join(dir, "state.db"));
    const dispatcher = new Agent();
    const config = configFromDocument(
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
    try {
      const err = await startDaemonServer({
        listen: taken,
        reconciler,
        environments: implicitEnvironment({ reconciler, state, config }),
        metrics: new DaemonMetrics(),
        logger: silentLogger(),
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe(`cannot listen on ${taken}: another process is listening there (EADDRINUSE)`);
    } finally {
      await dispatcher.close();
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it("is checked in gatesync.yaml, at its position", async () => {
    const examples = await readFile(path.join(import.meta.dirname, "../../examples/gatesync.yaml"), "utf8");
    const dir = await tempRepo({ "gatesync.yaml": examples.replace("listen: 127.0.0.1:9464", "listen: nonsense") });
    const r = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml")], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error\[CONFIG_INVALID\] .*gatesync\.yaml:\d+:11 server\.listen: must match pattern/);
  });

  it("refuses a malformed --listen before starting anything, even with --once", async () => {
    const r = await runCli(["run", "--config", path.join(import.meta.dirname, "../../examples/gatesync.yaml"), "--listen", "nonsense", "--once"], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error[CONFIG_INVALID] cannot listen on "nonsense": it is not HOST:PORT');
  });
});
