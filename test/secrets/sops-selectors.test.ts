/**
 * A SOPS file's selectors (`encrypted_regex`, `unencrypted_regex`) come from the repository and
 * are tested against every key of the file: compiled with the linear-time engine, in Go's RE2
 * syntax as sops reads them.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { readMetadata, shouldBeEncrypted, SopsProblem } from "../../src/secrets/sops/sops-format.js";

const meta = (extra: Record<string, unknown>) => readMetadata({ mac: "ENC[…]", lastmodified: "2026-01-01T00:00:00Z", age: [], ...extra });

describe("a SOPS file's selectors", () => {
  it("choose the encrypted values as sops does, `(?i)` included", () => {
    const m = meta({ encrypted_regex: "(?i)^(password|token)$" });
    expect(shouldBeEncrypted(m, ["db", "Password"])).toBe(true);
    expect(shouldBeEncrypted(m, ["db", "host"])).toBe(false);
    const u = meta({ unencrypted_regex: "^public_" });
    expect(shouldBeEncrypted(u, ["public_url"])).toBe(false);
    expect(shouldBeEncrypted(u, ["secret"])).toBe(true);
  });

  it("run in linear time: a pattern that backtracks for ever in a JavaScript RegExp answers", () => {
    // in a process of its own: a backtracking engine would never return, and is stopped at the time limit
    const script = `import { readMetadata, shouldBeEncrypted } from ${JSON.stringify(pathToFileURL(path.resolve("src/secrets/sops/sops-format.ts")).href)};
const m = readMetadata({ mac: "x", lastmodified: "2026-01-01T00:00:00Z", age: [], encrypted_regex: "^(a+)+$" });
process.stdout.write(String(shouldBeEncrypted(m, ["a".repeat(5000) + "!"])));`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { timeout: 20_000, encoding: "utf8" });
    expect(run.signal).toBeNull();
    expect(run.stdout).toBe("false");
  });

  it("refuse a pattern RE2 does not read (a back-reference), as SOPS_INVALID", () => {
    expect(() => meta({ encrypted_regex: "^(a)\\1$" })).toThrow(SopsProblem);
  });
});
