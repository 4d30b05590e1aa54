/**
 * The state writer's side of the redaction layer: a facade over any state backend that scrubs
 * every record (and every snapshot of a migration) before the backend sees it. It sits where a
 * record is handed to storage, so it holds whichever backend the config opens.
 */
import type { ResourceRecord, StateBackend, StateSnapshot } from "./state.js";
import { scrubDeep } from "../redactor.js";

/** The backend, with records scrubbed on their way in; every other member passes through. */
export function redactingState<B extends StateBackend>(backend: B): B {
  const write = (record: ResourceRecord): Promise<void> => backend.write(scrubDeep(record));
  const replaceAll = (snapshot: StateSnapshot): Promise<void> =>
    backend.replaceAll({ ...snapshot, resources: new Map([...snapshot.resources].map(([id, r]) => [id, scrubDeep(r)])) });
  return new Proxy(backend, {
    get(target, key, receiver) {
      if (key === "write") return write;
      if (key === "replaceAll") return replaceAll;
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
