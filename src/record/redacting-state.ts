/**
 * The state's side of the redaction layer: a facade over any state backend that scrubs every
 * record (and every snapshot of a migration) before the backend sees it, and every record it
 * reads back — a payload still held as text (lazy-record.ts) when it is parsed. It sits where
 * records meet storage, so it holds whichever backend the config opens. Documents held by
 * reference are read into the record before it is scrubbed.
 */
import { materialize } from "../kinds/document-ref.js";
import { redactor, scrubDeep } from "../redactor.js";
import { mapLazyRecord } from "./lazy-record.js";
import type { ReadOptions, ResourceRecord, StateBackend, StateSnapshot } from "./state.js";

/** The snapshot with every record scrubbed, payloads not parsed yet included (when they are). */
function scrubbedSnapshot(snapshot: StateSnapshot): StateSnapshot {
  if (redactor.size === 0) return snapshot;
  return { ...snapshot, resources: new Map([...snapshot.resources].map(([id, r]) => [id, mapLazyRecord(r, scrubDeep, scrubDeep)])) };
}

/** The backend, with records scrubbed on their way in and out; every other member passes through. */
export function redactingState<B extends StateBackend>(backend: B): B {
  // documents held by reference are read into the record first, so that they are scrubbed too
  const write = (record: ResourceRecord): Promise<void> => backend.write(scrubDeep(materialize(record)));
  const replaceAll = (snapshot: StateSnapshot): Promise<void> =>
    backend.replaceAll({ ...snapshot, resources: new Map([...snapshot.resources].map(([id, r]) => [id, scrubDeep(materialize(r))])) });
  const read = async (options?: ReadOptions): Promise<StateSnapshot> => scrubbedSnapshot(await backend.read(options));
  return new Proxy(backend, {
    get(target, key, receiver) {
      if (key === "write") return write;
      if (key === "replaceAll") return replaceAll;
      if (key === "read") return read;
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
