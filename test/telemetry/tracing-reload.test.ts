/**
 * The daemon's `telemetry:` settings follow a reload of gatesync.yaml: a real `gatesync run`
 * exporting to one OTLP receiver on loopback; its file is rewritten to name another collector
 * and service, and the daemon is rebuilt (its run in flight finishing first) with its tracing
 * restarted — the next runs go to the new collector under the new name, none to the old; a
 * reload to `exporter: none` turns tracing off, the daemon running on.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { startReceiver } from "../helpers/otlp-receiver.js";
import type { Receiver } from "../helpers/otlp-receiver.js";
import { call } from "../helpers/sandbox.js";

let h: Harness | undefined;
const receivers: Receiver[] = [];
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  if (daemon !== undefined && daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
  daemon = undefined;
  await h?.stop();
  h = undefined;
  for (const r of receivers.splice(0)) await r.stop();
});

const syncToken = "tracing-reload-sync-token";
const telemetry = (endpoint: string, serviceName: string): string => `telemetry:\n  traces: { endpoint: ${endpoint}, serviceName: ${serviceName} }\n`;
const runSpans = (r: Receiver): number => r.spans().filter((s) => s.name === "gatesync.run").length;
const count = (text: string, what: string): number => text.split(what).length - 1;

describe("tracing settings on a reload of gatesync.yaml", () => {
  it("restarts the daemon's tracing with the new collector and service name, and turns it off with exporter: none", async () => {
    const [first, second] = [await startReceiver("ok"), await startReceiver("ok")];
    receivers.push(first, second);
    h = await harness({
      batch: true,
      ownCredentials: true,
      configExtra: `server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }\nschedule: { interval: 1h }\n${telemetry(first.url, "before-reload")}`,
    });
    const file = path.join(h.dir, "gatesync.yaml");
    daemon = await spawnDaemon(file, h.dir, { ...h.env, SYNC_TOKEN: syncToken, OTEL_BSP_SCHEDULE_DELAY: "50" });
    const d = daemon;
    await eventually(
      () => runSpans(first),
      (n) => n >= 1,
      60_000,
    );
    expect(first.resource()["service.name"]).toBe("before-reload");

    /** Rewrites the file's telemetry section; resolves with the rebuilt daemon's address once its first run finished. */
    const reloadTo = async (section: string): Promise<string> => {
      const rebuilt = count(d.output(), "restarting the daemon");
      const finished = count(d.output(), '"msg":"run finished"') + count(d.output(), '"result":"noop"');
      const text = await readFile(file, "utf8");
      await writeFile(file, text.replace(/telemetry:\n {2}traces: .*\n/, section));
      const out = await eventually(
        () => d.output(),
        (o) => count(o, "restarting the daemon") > rebuilt && count(o, '"msg":"run finished"') + count(o, '"result":"noop"') > finished,
        60_000,
      );
      return [...out.matchAll(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/g)].at(-1)![1]!;
    };
    const sync = async (url: string): Promise<void> => {
      expect((await call(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).status).toBe(202);
    };

    const url = await reloadTo(telemetry(second.url, "after-reload"));
    const firstAfterRestart = runSpans(first);
    await sync(url);
    await eventually(
      () => second.spans().filter((s) => s.name === "gatesync.run" && s.attributes["gatesync.trigger"] === "sync").length,
      (n) => n >= 1,
      60_000,
    );
    expect(second.resource()["service.name"]).toBe("after-reload");
    expect(runSpans(first)).toBe(firstAfterRestart);

    const offUrl = await reloadTo(`telemetry:\n  traces: { exporter: none }\n`);
    const [a, b] = [first.bodies.length, second.bodies.length];
    const synced = count(d.output(), '"reason":"sync"');
    await sync(offUrl);
    await eventually(
      () => count(d.output(), '"reason":"sync"'),
      (n) => n > synced,
      60_000,
    );
    // the batch processor's delay is 50 ms: anything exported would have left by now
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect([first.bodies.length, second.bodies.length]).toEqual([a, b]);

    d.child.kill("SIGTERM");
    await new Promise<void>((resolve) => d.child.once("close", () => resolve()));
    expect(d.child.exitCode).toBe(0);
  }, 240_000);
});
