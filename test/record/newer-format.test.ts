/**
 * A state written by a newer gatesync (a format this one does not read) is refused before anything
 * is read from it, on every reader: STATE_VERSION, with the hint to use the newer gatesync — never
 * read as if it were this format, and never written over.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { LegacyFileState } from "../../src/record/legacy-file/legacy-file-state.js";
import type { StateBackend } from "../../src/record/state.js";
import { dropTestSchemas, sql } from "../helpers/postgres.js";
import { stateBackends } from "../helpers/state-backends.js";
import { tempRepo } from "../helpers/temp-repo.js";

afterAll(dropTestSchemas);

/** Every read of `state`, each refused alike. */
async function expectRefused(state: StateBackend): Promise<void> {
  const heads = { lineage: "l", serial: 1, hashKey: undefined, resources: new Map() };
  for (const read of [() => state.read(), () => state.readHeads(), () => state.readVersion(), () => state.readPayloads(heads, new Set(["OrgKey/a"]))]) {
    await expect(read()).rejects.toMatchObject({ code: "STATE_VERSION", hint: "use the newer gatesync that wrote it" });
  }
}

describe.each(stateBackends)("a %s state of a newer format", (name, fresh) => {
  it("is refused on every read", async () => {
    const open = await fresh();
    const state = open();
    const lock = await state.lock("test");
    await state.initialise(undefined);
    await lock.release();
    if (name === "sqlite") {
      const db = new Database((state as unknown as { file: string }).file);
      db.prepare("UPDATE meta SET format_version = 99 WHERE id = 1").run();
      db.close();
    } else {
      await sql(`UPDATE ${state.description.replace("postgres schema ", "")}.meta SET format_version = 99 WHERE id = 1`);
    }
    await state.close();
    const again = open();
    await expectRefused(again);
    await again.close();
  });
});

describe("an old file state of a newer format", () => {
  it("is refused, the file named", async () => {
    const file = path.join(await tempRepo(), "state.json");
    await writeFile(file, JSON.stringify({ formatVersion: 99, lineage: "l", serial: 1, resources: {} }));
    await expect(new LegacyFileState(file).read()).rejects.toMatchObject({
      code: "STATE_VERSION",
      message: `the state ${file} has format 99; this gatesync reads format 1`,
    });
  });
});
