/**
 * A read-only reader of the retired file state (`state.json` plus `state.json.journal`, with
 * `state.json.bak`), kept only so `gatesync state migrate --from file:PATH` can move an old
 * state into SQLite or PostgreSQL. It never writes, never locks and never creates a file.
 *
 * It recovers what the old writer could leave behind after a crash: a missing `state.json`
 * beside its `.bak` (killed between the two renames of a compaction), a torn last journal line,
 * and a torn line with the next entry glued onto it (the next writer appended after it).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { ErrorCode, StateError, UsageError } from "../../errors.js";
import type { HistoryEntry } from "../history/history.js";
import type { ResourceRecord, StateBackend, StateLock, StateSnapshot, StateVersion } from "../state.js";
import { recordOfJson } from "../wrappers/lazy-record.js";
import { checkStateFormat, recordProblem, stateFormatVersion } from "../state.js";
import { stateIoError } from "../state-io.js";

interface StateFile {
  formatVersion: number;
  lineage: string;
  serial: number;
  hashKey?: string;
  resources: Record<string, ResourceRecord>;
}

type JournalEntry =
  | { serial: number; op: "write"; record: ResourceRecord }
  | { serial: number; op: "remove"; id: string }
  | { serial: number; op: "init"; hashKey: string | undefined; lineage: string };

export class LegacyFileState implements StateBackend {
  readonly file: string;
  readonly description: string;

  constructor(file: string) {
    this.file = path.resolve(file);
    this.description = `file ${this.file} (old format, read only)`;
  }

  async readVersion(): Promise<StateVersion> {
    const { lineage, serial } = await this.read();
    return { lineage, serial };
  }

  /** The file is read whole: its heads are whole records, every payload read already. */
  readHeads(): Promise<StateSnapshot> {
    return this.read();
  }

  readPayloads(heads: StateSnapshot): Promise<StateSnapshot> {
    return Promise.resolve(heads);
  }

  async read(): Promise<StateSnapshot> {
    const base = (await this.parse(this.file)) ??
      (await this.parse(`${this.file}.bak`)) ?? { formatVersion: stateFormatVersion, lineage: "", serial: 0, resources: {} };
    const state = {
      lineage: base.lineage,
      serial: base.serial,
      hashKey: base.hashKey,
      resources: new Map(Object.entries(base.resources).map(([id, r]) => [id, recordOfJson(r as unknown as Record<string, unknown>)])),
    };
    for (const entry of await this.journal()) {
      if (entry.serial <= state.serial) continue; // already folded in
      if (entry.op === "write") state.resources.set(entry.record.id, recordOfJson(entry.record as unknown as Record<string, unknown>));
      else if (entry.op === "remove") state.resources.delete(entry.id);
      else {
        state.hashKey = entry.hashKey;
        if (state.lineage === "") state.lineage = entry.lineage;
      }
      state.serial = entry.serial;
    }
    return state;
  }

  private async text(file: string): Promise<string | undefined> {
    try {
      return await readFile(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw stateIoError("cannot read the old state", file, err);
    }
  }

  private async parse(file: string): Promise<StateFile | undefined> {
    const text = await this.text(file);
    if (text === undefined) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw this.corrupt(file, `it is not valid JSON (${(err as Error).message})`);
    }
    const d = data as Partial<StateFile> | null;
    if (d === null || typeof d !== "object" || typeof d.formatVersion !== "number") throw this.corrupt(file, "it has no formatVersion");
    checkStateFormat(d.formatVersion, `the state ${file}`);
    if (typeof d.lineage !== "string" || typeof d.serial !== "number" || d.resources === null || typeof d.resources !== "object")
      throw this.corrupt(file, "lineage, serial or resources is missing");
    for (const [id, r] of Object.entries(d.resources)) {
      const problem = recordProblem(r);
      if (problem !== undefined) throw this.corrupt(file, problem);
      if (r.id !== id) throw this.corrupt(file, `record ${id} holds ${r.id}`);
    }
    return d as StateFile;
  }

  /** The journal's entries; a torn line is skipped, and an entry glued onto one is recovered. */
  private async journal(): Promise<JournalEntry[]> {
    const file = `${this.file}.journal`;
    const lines = ((await this.text(file)) ?? "").split("\n");
    const entries: JournalEntry[] = [];
    lines.forEach((line, i) => {
      if (line === "") return;
      const entry = parseEntry(line);
      if (entry === undefined) {
        if (lines.slice(i + 1).every((l) => l === "")) return; // the torn last line: a write in flight
        throw this.corrupt(file, `journal line ${i + 1} is not valid JSON`);
      }
      if (entry.op === "write") {
        const problem = recordProblem(entry.record);
        if (problem !== undefined) throw this.corrupt(file, `journal line ${i + 1}: ${problem}`);
      }
      entries.push(entry);
    });
    return entries;
  }

  lock(): Promise<StateLock> {
    return Promise.resolve({ release: () => Promise.resolve(), check: () => undefined });
  }

  write(): Promise<void> {
    return Promise.reject(this.readOnly());
  }

  writeClaiming(): Promise<never> {
    return Promise.reject(this.readOnly());
  }

  remove(): Promise<void> {
    return Promise.reject(this.readOnly());
  }

  initialise(): Promise<void> {
    return Promise.reject(this.readOnly());
  }

  replaceAll(): Promise<void> {
    return Promise.reject(this.readOnly());
  }

  appendHistory(): Promise<never> {
    return Promise.reject(this.readOnly());
  }

  /** The old file state kept no history. */
  readHistory(): Promise<HistoryEntry[]> {
    return Promise.resolve([]);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private readOnly(): StateError {
    return new UsageError(`the old file state ${this.file} is read only`, { hint: "migrate it to sqlite:PATH or postgres, and write there" });
  }

  private corrupt(file: string, what: string): StateError {
    return new StateError(ErrorCode.STATE_CORRUPT, `the old state ${file} is corrupt: ${what}`, {
      hint: "it was left untouched; restore it from a backup, or repair it by hand, then migrate again",
      location: { file },
    });
  }
}

/** One journal line; with a torn entry in front, the whole entry that follows it. */
function parseEntry(line: string): JournalEntry | undefined {
  const whole = tryParse(line);
  if (whole !== undefined) return whole;
  const glued = line.lastIndexOf('{"serial":');
  return glued > 0 ? tryParse(line.slice(glued)) : undefined;
}

function tryParse(text: string): JournalEntry | undefined {
  try {
    const v = JSON.parse(text) as Partial<JournalEntry> | null;
    return v !== null && typeof v === "object" && typeof v.serial === "number" && typeof v.op === "string" ? (v as JournalEntry) : undefined;
  } catch {
    return undefined;
  }
}
