/**
 * Sync windows in the daemon's gatesync.yaml (config/windows-section.ts): a schedule croner cannot
 * read, or an unknown time zone, refuses the config at its line; a good one is read and its
 * verdict follows the clock (inside a deny window, outside every allow window: closed).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { environmentsOf } from "../../src/config/environments.js";
import { windowVerdict } from "../../src/config/windows-section.js";
import { ValidationFailed } from "../../src/errors.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const config = (windows: string): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets: { gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY } }
environments:
  production:
    windows:
${windows}
`;

async function load(windows: string): Promise<ReturnType<typeof loadConfig>> {
  const dir = await tempRepo();
  const file = path.join(dir, "gatesync.yaml");
  await writeFile(file, config(windows));
  return loadConfig(file);
}

describe("sync windows", () => {
  it("refuses a bad schedule and an unknown time zone at their line", async () => {
    const err = await load(
      `      - { kind: deny, schedule: "61 * * * *", duration: 1h }\n      - { kind: allow, schedule: "0 8 * * *", duration: 1h, timeZone: Mars/Olympus }`,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationFailed);
    const found = (err as ValidationFailed).diagnostics.map((d) => [d.path, d.line, d.message.split(":")[0]]);
    expect(found).toEqual([
      ["environments.production.windows[0].schedule", 8, 'bad cron schedule "61 * * * *"'],
      ["environments.production.windows[1].timeZone", 9, 'unknown time zone "Mars/Olympus"'],
    ]);
  });

  it("reads the windows, and closes inside a deny window or outside every allow window, in their time zone", async () => {
    const c = await load(`      - { kind: allow, schedule: "0 8 * * 1-5", duration: 10h, timeZone: Europe/Berlin }`);
    const windows = environmentsOf(c).find((e) => e.name === "production")!.config.windows!;
    expect(windows).toEqual([{ kind: "allow", schedule: "0 8 * * 1-5", durationMs: 36_000_000, timeZone: "Europe/Berlin" }]);
    // Wednesday 2026-12-02: 08:00 Berlin is 07:00 UTC
    expect(windowVerdict(windows, Date.parse("2026-12-02T06:59:00Z"))).toMatchObject({ closedBy: windows[0], changesAt: Date.parse("2026-12-02T07:00:00Z") });
    expect(windowVerdict(windows, Date.parse("2026-12-02T07:00:00Z"))).toEqual({ changesAt: Date.parse("2026-12-02T17:00:00Z") });
    expect(windowVerdict(windows, Date.parse("2026-12-05T12:00:00Z")).closedBy).toBe(windows[0]); // a Saturday
    const deny = [{ kind: "deny" as const, schedule: "0 22 * * *", durationMs: 3_600_000, timeZone: "UTC" }];
    expect(windowVerdict(deny, Date.parse("2026-12-02T22:30:00Z"))).toMatchObject({ closedBy: deny[0], changesAt: Date.parse("2026-12-02T23:00:00Z") });
    expect(windowVerdict(deny, Date.parse("2026-12-02T23:00:00Z")).closedBy).toBeUndefined();
  });
});
