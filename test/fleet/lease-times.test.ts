/** `state.lease` in gatesync.yaml: the fleet's lease times, the operator's, with a checked ratio. */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { ValidationFailed } from "../../src/errors.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("lease times in gatesync.yaml", () => {
  const config = (lease: string, environmentState = ""): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: config }
targets:
  gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY }
environments:
  eu: {${environmentState}}
  us: {}
state:
  backend: postgres
  urlEnv: DATABASE_URL
${lease}`;
  const failure = async (yaml: string): Promise<ValidationFailed> => {
    const dir = await tempRepo({ "gatesync.yaml": yaml });
    const err = await loadConfig(path.join(dir, "gatesync.yaml")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationFailed);
    return err as ValidationFailed;
  };

  it("are the operator's to set, the defaults (5s, renewed every 1s) where absent", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config("  lease: { duration: 3s, renewEvery: 500ms }\n"), "other.yaml": config("") });
    expect((await loadConfig(path.join(dir, "gatesync.yaml"))).state).toMatchObject({ lease: { durationMs: 3_000, renewMs: 500 } });
    expect((await loadConfig(path.join(dir, "other.yaml"))).state).not.toHaveProperty("lease");
  });

  it("refuse fewer than three renewals per lease, located at renewEvery with a hint that, followed, loads", async () => {
    const yaml = config("  lease:\n    duration: 5s\n    renewEvery: 2s\n");
    const [d, ...more] = (await failure(yaml)).diagnostics;
    expect(more).toEqual([]);
    const at = positionOf(yaml, "2s");
    expect([d!.code, d!.path, d!.line, d!.column]).toEqual(["CONFIG_INVALID", "state.lease.renewEvery", at.line, at.column]);
    expect(d!.message).toBe("renewing every 2s is less than 3 renewals per lease of 5s: one slow renewal would lose the lease");
    expect(d!.hint).toBe("set `renewEvery: 1666ms` or less, or `duration: 6s` or more");
    const dir = await tempRepo({ "a.yaml": yaml.replace("renewEvery: 2s", "renewEvery: 1666ms"), "b.yaml": yaml.replace("duration: 5s", "duration: 6s") });
    expect((await loadConfig(path.join(dir, "a.yaml"))).state).toMatchObject({ lease: { durationMs: 5_000, renewMs: 1_666 } });
    expect((await loadConfig(path.join(dir, "b.yaml"))).state).toMatchObject({ lease: { durationMs: 6_000, renewMs: 2_000 } });
  });

  it("refuse a lease under a second, a renewal more often than every 100ms, and lease times of one environment's own", async () => {
    const short = (await failure(config("  lease: { duration: 500ms, renewEvery: 100ms }\n"))).diagnostics;
    expect(short.map((d) => [d.path, d.hint])).toEqual([["state.lease.duration", "set `duration: 1s` or more (the default is 5s)"]]);
    const often = (await failure(config("  lease: { duration: 1s, renewEvery: 50ms }\n"))).diagnostics;
    expect(often.map((d) => [d.path, d.hint])).toEqual([["state.lease.renewEvery", "set `renewEvery: 100ms` or more"]]);
    const own = (await failure(config("", " state: { backend: postgres, urlEnv: DATABASE_URL, schema: eu_own, lease: { duration: 9s } } "))).diagnostics;
    expect(own.map((d) => [d.path, d.message])).toEqual([["environments.eu.state.lease", "environment eu sets lease times of its own"]]);
  });
});
