/**
 * The file state backend (the embedded default): `state.json` plus an append-only journal.
 *
 * - Each write appends one JSON line to `state.json.journal` and fsyncs it: per-resource
 *   recording costs O(1), and a process killed mid-write leaves at most a torn last line
 *   (the write in flight), which reading skips.
 * - Compaction (on unlock, and when the journal grows) folds the journal into `state.json`
 *   atomically: temp file, fsync, rename, fsync of the directory; the previous version is
 *   kept as `state.json.bak`.
 * - The lock is `state.json.lock`, created exclusively. A holder refreshes it while it lives;
 *   a lock whose process is gone (same host) or that has not been refreshed for `staleMs` is
 *   taken over, so a crashed holder never leaves it stuck.
 * - A corrupt file is an error that names the file and position; it is never replaced by an
 *   empty state.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { open, readFile, rename, rm, stat, utimes } from "node:fs/promises";
import { ensureDirectory } from "../ensure-directory.js";
import type { FileHandle } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { ErrorCode, StateError } from "../errors.js";
import type { ResourceRecord, StateBackend, StateLock, StateSnapshot } from "./state.js";
import { recordProblem, stateFormatVersion } from "./state.js";

interface StateFile {
  formatVersion: number;
  lineage: string;
  serial: number;
  hashKey?: string;
  resources: Record<string, ResourceRecord>;
}

type JournalEntry = { serial: number; op: "write"; record: ResourceRecord } | { serial: number; op: "remove"; id: string } | { serial: number; op: "init"; hashKey: string | undefined; lineage: string };

interface LockInfo {
  owner: string;
  pid: number;
  host: string;
  createdAt: string;
}

export interface FileBackendOptions {
  /** A lock not refreshed for this long is taken over (default 60 s). */
  readonly staleMs?: number;
  /** How often a holder refreshes its lock (default 10 s). */
  readonly refreshMs?: number;
  /** Journal entries before a compaction (default 500, or the number of records if more). */
  readonly compactEvery?: number;
  /**
   * Fold the journal in at every release (default). A long-running daemon turns this off: its
   * runs then cost what they change, and the journal is folded in when long and at close.
   */
  readonly compactOnRelease?: boolean;
}

export class FileStateBackend implements StateBackend {
  readonly file: string;
  private readonly journalFile: string;
  private readonly lockFile: string;
  private readonly staleMs: number;
  private readonly refreshMs: number;
  private readonly compactEvery: number;
  private readonly compactOnRelease: boolean;
  private held: { handle: FileHandle; timer: NodeJS.Timeout } | undefined;
  /** While the lock is held: the state in memory (the journal on disk is the truth for others). */
  private cache: LiveState | undefined;
  /** Journal lines waiting for the next write, and the write in progress. */
  private pending: Array<{ line: string; resolve: () => void; reject: (err: unknown) => void }> = [];
  private flushing: Promise<void> | undefined;
  private journalEntries = 0;

  constructor(file: string, options: FileBackendOptions = {}) {
    this.file = path.resolve(file);
    this.journalFile = `${this.file}.journal`;
    this.lockFile = `${this.file}.lock`;
    this.staleMs = options.staleMs ?? 60_000;
    this.refreshMs = options.refreshMs ?? 10_000;
    this.compactEvery = options.compactEvery ?? 500;
    this.compactOnRelease = options.compactOnRelease ?? true;
  }

  async read(): Promise<StateSnapshot> {
    if (this.cache !== undefined) return { ...this.cache, resources: new Map(this.cache.resources) };
    return this.replay(await this.readBase());
  }

  async lock(owner: string): Promise<StateLock> {
    await ensureDirectory(path.dirname(this.file)).catch((err: unknown) => {
      throw this.ioError("cannot create the state's directory", err);
    });
    const info: LockInfo = { owner, pid: process.pid, host: hostname(), createdAt: new Date().toISOString() };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const handle = await open(this.lockFile, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
        await handle.writeFile(JSON.stringify(info));
        await handle.sync();
        const timer = setInterval(() => {
          const now = new Date();
          utimes(this.lockFile, now, now).catch(() => undefined);
        }, this.refreshMs);
        timer.unref();
        this.held = { handle, timer };
        try {
          this.cache = await this.replay(await this.readBase());
        } catch (e) {
          await this.release();
          throw e;
        }
        return { release: () => this.release() };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw this.ioError("cannot create the state lock", err);
        const holder = await this.staleHolder();
        if (holder.stale) {
          await rm(this.lockFile, { force: true });
          continue;
        }
        throw new StateError(ErrorCode.STATE_LOCKED, `the state ${this.file} is locked by ${holder.description}`, {
          hint: "wait for that run to finish; if its process is gone on another host, the lock is taken over once it has not been refreshed for a minute",
        });
      }
    }
    throw new StateError(ErrorCode.STATE_LOCKED, `the state ${this.file} is locked`, { hint: "another process took the lock at the same moment: try again" });
  }

  private async staleHolder(): Promise<{ stale: boolean; description: string }> {
    let info: Partial<LockInfo> = {};
    let age = 0;
    try {
      info = JSON.parse(await readFile(this.lockFile, "utf8")) as Partial<LockInfo>;
      age = Date.now() - (await stat(this.lockFile)).mtimeMs;
    } catch {
      // a lock file being written right now, or unreadable: judge by age alone
      try {
        age = Date.now() - (await stat(this.lockFile)).mtimeMs;
      } catch {
        return { stale: true, description: "nobody" };
      }
    }
    const description = `${info.owner ?? "an unknown owner"} (pid ${info.pid ?? "?"} on ${info.host ?? "?"}, since ${info.createdAt ?? "?"})`;
    if (info.host === hostname() && typeof info.pid === "number" && !processAlive(info.pid)) return { stale: true, description };
    return { stale: age > this.staleMs, description };
  }

  private async release(final = false): Promise<void> {
    if (this.held === undefined) return;
    const { handle, timer } = this.held;
    clearInterval(timer);
    try {
      await this.flushing;
      // the journal is durable: it is folded in only once it is long (not after every run)
      if (this.cache !== undefined && (this.compactOnRelease || final || this.journalEntries >= this.compactThreshold())) await this.compact();
    } finally {
      this.cache = undefined;
      await handle.close();
      this.held = undefined;
      await rm(this.lockFile, { force: true });
    }
  }

  async initialise(hashKey: string | undefined): Promise<void> {
    const cache = this.requireLock();
    if (cache.serial > 0 || cache.hashKey !== undefined) return;
    // With GATESYNC_HASH_KEY set the state holds no key at all.
    await this.append((serial) => ({ serial, op: "init", hashKey, lineage: cache.lineage === "" ? randomUUID() : cache.lineage }));
  }

  async write(record: ResourceRecord): Promise<void> {
    const problem = recordProblem(record);
    if (problem !== undefined) throw new StateError(ErrorCode.INTERNAL, `refusing to write an invalid record: ${problem}`);
    await this.append((serial) => ({ serial, op: "write", record }));
  }

  get description(): string {
    return `file ${this.file}`;
  }

  async replaceAll(snapshot: StateSnapshot): Promise<void> {
    const cache = this.requireLock();
    await this.flushing;
    cache.lineage = snapshot.lineage;
    cache.serial = snapshot.serial;
    cache.hashKey = snapshot.hashKey;
    cache.resources = new Map(snapshot.resources);
    // write it out now: the snapshot replaces file and journal at once
    this.journalEntries = Math.max(1, this.journalEntries);
    await this.compact();
  }

  async remove(id: string): Promise<void> {
    await this.append((serial) => ({ serial, op: "remove", id }));
  }

  async close(): Promise<void> {
    if (this.held !== undefined) {
      await this.release(true);
      return;
    }
    // folding a journal left by earlier runs needs the lock; another writer may hold it
    if (!this.compactOnRelease) {
      try {
        await this.lock("gatesync (closing)").then(() => this.release(true));
      } catch {
        // the journal stays: it is complete and durable
      }
    }
  }

  private requireLock(): NonNullable<FileStateBackend["cache"]> {
    if (this.held === undefined || this.cache === undefined) throw new StateError(ErrorCode.INTERNAL, "state written without holding its lock");
    return this.cache;
  }

  /**
   * Appends one journal entry and applies it to the cache. Group commit: entries that arrive
   * while a write is in progress go out together in the next write, with one fsync; each
   * promise resolves only once its entry is on disk.
   */
  private append(make: (serial: number) => JournalEntry): Promise<void> {
    const cache = this.requireLock();
    const entry = make(cache.serial + 1);
    applyEntry(cache, entry);
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ line: `${JSON.stringify(entry)}\n`, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /** A journal as long as this is folded into state.json: compaction stays proportional. */
  private compactThreshold(): number {
    return Math.max(this.compactEvery, this.cache?.resources.size ?? 0);
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const group = this.pending.splice(0);
        try {
          const handle = await open(this.journalFile, "a", 0o600);
          try {
            await handle.writeFile(group.map((g) => g.line).join(""));
            await handle.sync();
          } finally {
            await handle.close();
          }
        } catch (err) {
          const e = this.ioError("cannot write the state journal", err);
          for (const g of group) g.reject(e);
          continue;
        }
        this.journalEntries += group.length;
        // a journal as long as the state is folded in: compaction costs stay proportional
        if (this.journalEntries >= this.compactThreshold()) {
          try {
            await this.compact();
          } catch (err) {
            for (const g of group) g.reject(err);
            continue;
          }
        }
        for (const g of group) g.resolve();
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Folds the journal into state.json atomically. */
  private async compact(): Promise<void> {
    const snapshot = this.cache ?? (await this.replay(await this.readBase()));
    if (this.journalEntries === 0 && this.cache !== undefined) return;
    const data: StateFile = {
      formatVersion: stateFormatVersion,
      lineage: snapshot.lineage,
      serial: snapshot.serial,
      ...(snapshot.hashKey === undefined ? {} : { hashKey: snapshot.hashKey }),
      resources: Object.fromEntries([...snapshot.resources.entries()].sort(([a], [b]) => (a < b ? -1 : 1))),
    };
    const tmp = `${this.file}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
    const handle = await open(tmp, "w", 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(data, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(this.file, `${this.file}.bak`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw this.ioError("cannot keep the previous state as a backup", err);
    }
    await rename(tmp, this.file);
    await syncDir(path.dirname(this.file));
    await rm(this.journalFile, { force: true });
    this.journalEntries = 0;
  }

  /** The last state.json parsed, reused while the file is unchanged (runs of a daemon). */
  private parsedBase: { key: string; data: StateFile } | undefined;

  private async readBase(): Promise<StateFile> {
    let key: string;
    try {
      const st = await stat(this.file);
      key = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { formatVersion: stateFormatVersion, lineage: "", serial: 0, resources: {} };
      throw this.ioError("cannot read the state", err);
    }
    if (this.parsedBase?.key === key) return this.parsedBase.data;
    const data = await this.parseBase();
    this.parsedBase = { key, data };
    return data;
  }

  private async parseBase(): Promise<StateFile> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (err) {
      // No state yet: no lineage until the first write initialises one.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { formatVersion: stateFormatVersion, lineage: "", serial: 0, resources: {} };
      throw this.ioError("cannot read the state", err);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw this.corrupt(`it is not valid JSON (${(err as Error).message})`);
    }
    if (data === null || typeof data !== "object" || Array.isArray(data)) throw this.corrupt("it is not a JSON object");
    const d = data as Partial<StateFile>;
    if (typeof d.formatVersion !== "number") throw this.corrupt("it has no formatVersion");
    if (d.formatVersion > stateFormatVersion) {
      throw new StateError(ErrorCode.STATE_VERSION, `the state ${this.file} has format ${d.formatVersion}; this gatesync reads format ${stateFormatVersion}`, { hint: "use the newer gatesync that wrote it" });
    }
    if (typeof d.lineage !== "string" || typeof d.serial !== "number" || d.resources === null || typeof d.resources !== "object") throw this.corrupt("lineage, serial or resources is missing");
    for (const [id, r] of Object.entries(d.resources)) {
      const problem = recordProblem(r);
      if (problem !== undefined) throw this.corrupt(problem);
      if (r.id !== id) throw this.corrupt(`record ${id} holds ${r.id}`);
    }
    return d as StateFile;
  }

  /** The state file with the journal applied: a fresh object, its own to change. */
  private async replay(base: StateFile): Promise<LiveState> {
    const state: LiveState = { lineage: base.lineage, serial: base.serial, hashKey: base.hashKey, resources: new Map(Object.entries(base.resources)) };
    let text = "";
    try {
      text = await readFile(this.journalFile, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw this.ioError("cannot read the state journal", err);
    }
    const lines = text.split("\n");
    let entries = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === "") continue;
      let entry: JournalEntry;
      try {
        entry = JSON.parse(line) as JournalEntry;
      } catch {
        // Only the last line may be torn (a write in flight when the process died).
        if (lines.slice(i + 1).every((l) => l === "")) break;
        throw this.corrupt(`journal line ${i + 1} is not valid JSON`, this.journalFile);
      }
      if (entry.serial <= state.serial) continue; // already folded in
      if (entry.op === "write") {
        const problem = recordProblem(entry.record);
        if (problem !== undefined) throw this.corrupt(`journal line ${i + 1}: ${problem}`, this.journalFile);
      }
      applyEntry(state, entry);
      entries++;
    }
    this.journalEntries = entries;
    return state;
  }

  private corrupt(what: string, file = this.file): StateError {
    return new StateError(ErrorCode.STATE_CORRUPT, `the state ${file} is corrupt: ${what}`, {
      hint: `it was left untouched. Restore ${this.file}.bak (the previous version) or a backup; move the file away only if you mean to start from an empty state`,
      location: { file },
    });
  }

  private ioError(what: string, err: unknown): StateError {
    return new StateError(ErrorCode.STATE_IO, `${what} (${this.file}): ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
}

/** The state as a writer holds it while journal entries are applied. */
interface LiveState {
  lineage: string;
  serial: number;
  hashKey: string | undefined;
  resources: Map<string, ResourceRecord>;
}

function applyEntry(state: LiveState, entry: JournalEntry): void {
  if (entry.op === "write") state.resources.set(entry.record.id, entry.record);
  else if (entry.op === "remove") state.resources.delete(entry.id);
  else {
    state.hashKey = entry.hashKey;
    if (state.lineage === "") state.lineage = entry.lineage;
  }
  state.serial = entry.serial;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // some file systems cannot fsync a directory; the rename is still atomic
  } finally {
    await handle?.close();
  }
}
