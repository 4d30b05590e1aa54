/**
 * Records carry the labels their resource had when they were last written, so that a later
 * selection can judge an orphan (a record whose resource left the repository) by them. The
 * apply's state writes go through `labellingState`, which stamps each record with its
 * resource's current labels (a record of a resource not in the repository keeps its own) and
 * keeps an adoption mark across rewrites.
 */
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../record/state.js";

export type LabelsById = ReadonlyMap<string, Readonly<Record<string, string>>>;

export function labelsById(resources: readonly Resource[]): LabelsById {
  return new Map(resources.map((r) => [resourceId(r), r.labels]));
}

const sameLabels = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): boolean =>
  a !== undefined && Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);

/** The record as it should be stored: current labels, and the adoption mark of the record it replaces. */
export function stampRecord(record: ResourceRecord, labels: LabelsById, previous: ResourceRecord | undefined): ResourceRecord {
  const current = labels.get(record.id) ?? record.labels ?? previous?.labels;
  const adopted = record.adopted ?? previous?.adopted;
  // a record the apply built afresh after a successful call (it has no mark of its own): an
  // update sent to the adopted id was accepted, so the server knows the id and holds the spec
  const verified = adopted !== undefined && (adopted.verified || (record.adopted === undefined && record.status === "applied"));
  return {
    ...record,
    ...(current === undefined ? {} : { labels: current }),
    ...(adopted === undefined ? {} : { adopted: { ...adopted, verified } }),
  };
}

/** The backend with every write stamped (see stampRecord); everything else goes straight through. */
export function labellingState(backend: StateBackend, labels: LabelsById, before: StateSnapshot): StateBackend {
  const latest = new Map(before.resources);
  const write = async (record: ResourceRecord): Promise<void> => {
    const stamped = stampRecord(record, labels, latest.get(record.id));
    await backend.write(stamped);
    latest.set(record.id, stamped);
  };
  return new Proxy(backend, {
    get(target, prop) {
      if (prop === "write") return write;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Records of unchanged resources whose labels changed (or were never recorded): rewritten with the current ones. */
export function staleLabelRecords(selected: Iterable<string>, labels: LabelsById, records: ReadonlyMap<string, ResourceRecord>): ResourceRecord[] {
  const stale: ResourceRecord[] = [];
  for (const id of selected) {
    const record = records.get(id);
    const current = labels.get(id);
    if (record !== undefined && current !== undefined && !sameLabels(record.labels, current)) stale.push({ ...record, labels: current });
  }
  return stale;
}
