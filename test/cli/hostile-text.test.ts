/**
 * Text that came from a repository, a server or a peer reaches the terminal with no control a
 * terminal acts on — no C0 but tab and newline, no C1 (CSI 0x9b, OSC 0x9d by themselves), no
 * bidi override or isolate — in every printer: `history` (a state's rows, written by a peer or
 * an older version), `plan` (a repository's values), `validate` (findings quoting the
 * repository) and errors; and the CLI's own output gate keeps only gatesync's colours.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stripControls, terminalText } from "../../src/text/bounded-text.js";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import type { RunRecord } from "../../src/daemon/history/run-record.js";
import { formatDiagnostic, ErrorCode } from "../../src/errors.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { painter } from "../../src/text/style.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** A title set by OSC, a colour by a lone CSI, a link by a lone OSC, a line reversed and isolated, NEL, BEL, CR. */
const hostile = "a\u001b]0;pwned\u0007b\u009b2Jc\u009d8;;http://evil\u009cd\u202eexe.txt\u2066f\u2069\u0085g\rh\u061ci\u200fj";
/** What a terminal would act on. */
// eslint-disable-next-line no-control-regex -- finding them is the point
const acted = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

const at = "2026-11-27T10:00:00.000Z";
const run: RunRecord = {
  kind: "run",
  trigger: "webhook",
  outcome: "error",
  revision: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
  commit: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
  author: `Mallory ${hostile}`,
  subject: `fix typo ${hostile}\n#2 ${at} succeeded    webhook · forged`,
  counts: { applied: 0, failed: 1, inDoubt: 0, blocked: 0, skipped: 0, changes: 1, calls: 1 },
  durationMs: 840,
  startedAt: at,
  finishedAt: at,
  replica: `gw-1 ${hostile}`,
  synced: false,
  report: { reason: "webhook", startedAt: at, finishedAt: at, durationMs: 840, result: "error", error: `portal said ${hostile}` },
  changes: [{ id: "ApiProduct/shop", action: "create" }],
};

describe("text from outside, printed", () => {
  it("stripControls leaves no control; terminalText keeps gatesync's own colours and nothing else", () => {
    expect(stripControls(hostile)).not.toMatch(acted);
    expect(stripControls(hostile).length).toBe(hostile.length);
    expect(stripControls("tab\tand\nnewline stay, ünïcødé → stays")).toBe("tab\tand\nnewline stay, ünïcødé → stays");
    const painted = painter(true)("red", "error");
    expect(terminalText(`${painted} ${hostile}`)).toBe(`${painted} ${stripControls(hostile)}`);
  });

  it("gatesync history: a subject, author, error and replica with controls print none, and a newline forges no run", async () => {
    const dir = await tempRepo({ "config/.keep": "" });
    const config = path.join(dir, "gatesync.yaml");
    await writeFile(
      config,
      "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets:\n  portal: { url: http://127.0.0.1:1/portal, credentialEnv: P_KEY }\nstate: { backend: sqlite, path: ./state.db }\n",
    );
    const state = new SqliteStateBackend(path.join(dir, "state.db"));
    await state.appendHistory({ record: run }, defaultHistoryBound);
    await state.close();
    const text = await runCli(["history", "-c", config]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).not.toMatch(acted);
    expect(text.stdout).toContain("fix typo a ]0;pwned b 2Jc 8;;http://evil d exe.txt f  g h i j");
    expect(text.stdout.split("\n").filter((l) => l.startsWith("#"))).toHaveLength(1);
    expect(text.stdout).toContain("error: portal said a ]0;pwned");
  });

  it("gatesync plan: a repository's value with controls prints none", async () => {
    // eslint-disable-next-line no-control-regex -- the hostile characters, written as escapes in the YAML
    const name = hostile.replace(/[\u001b\u0007\r\u0085\u009b\u009c\u009d]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
    const dir = await tempRepo({
      "gatesync.yaml":
        "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets:\n  portal: { url: http://127.0.0.1:1/portal, credentialEnv: P_KEY }\nstate: { backend: sqlite, path: ./state.db }\n",
      "config/product.yaml": doc("ApiProduct", "shop", `Name: "${name}"\nProviderID: 1`),
    });
    const r = await runCli(["plan", "-c", path.join(dir, "gatesync.yaml")], { P_KEY: "k" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("+ ApiProduct/shop");
    expect(r.stdout).toContain("exe.txt");
    expect(r.stdout).not.toMatch(acted);
  });

  it("gatesync validate: a finding quoting the repository prints no control", async () => {
    // the key written raw: a YAML escape would be quoted as its backslash text
    const dir = await tempRepo({ "config/keys.yaml": "k\u009b2J\u202eexe: 1\nk\u009b2J\u202eexe: 2\n" });
    const r = await runCli(["validate", path.join(dir, "config")]);
    expect(r.code).toBe(1);
    expect(r.stderr + r.stdout).toContain("YAML_DUPLICATE_KEY");
    expect(r.stderr + r.stdout).not.toMatch(acted);
  });

  it("a located error's every part (file, path, message, hint) is printed stripped", () => {
    const line = formatDiagnostic({
      severity: "error",
      code: ErrorCode.SOURCE_FETCH,
      file: `f${hostile}.yaml`,
      path: hostile,
      message: hostile,
      hint: hostile,
    });
    expect(line).not.toMatch(acted);
  });
});
