/**
 * The state writer's side of the redaction layer: a facade over any state backend that scrubs
 * every record (and every snapshot of a migration) before the backend sees it. It sits where a
 * record is handed to storage, so it holds whichever backend the config opens. Documents held
 * by reference are read into the record before it is scrubbed.
 */
import type { ResourceRecord, StateBackend, StateSnapshot } from "./state.js";
import { materialize } from "../kinds/document-ref.js";
import { scrubDeep } from "../redactor.js";

/** The backend, with records scrubbed on their way in; every other member passes through. */
export function redactingState<B extends StateBackend>(backend: B): B {
  // documents held by reference are read into the record first, so that they are scrubbed too
  const write = (record: ResourceRecord): Promise<void> => backend.write(scrubDeep(materialize(record)));
  const replaceAll = (snapshot: StateSnapshot): Promise<void> =>
    backend.replaceAll({ ...snapshot, resources: new Map([...snapshot.resources].map(([id, r]) => [id, scrubDeep(materialize(r))])) });
  return new Proxy(backend, {
    get(target, key, receiver) {
      if (key === "write") return write;
      if (key === "replaceAll") return replaceAll;
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
