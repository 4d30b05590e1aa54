/**
 * Records carry the labels their resource had when they were last written, so that a later
 * selection can judge an orphan (a record whose resource left the repository) by them. The
 * apply's state writes go through `labellingState`, which stamps each record with its
 * resource's current labels (a record of a resource not in the repository keeps its own) and
 * keeps an adoption mark across rewrites.
 */
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import { wonRecords } from "../record/ownership/claimed-records.js";
import type { OwnershipRow } from "../record/ownership/ownership.js";
import type { ClaimedRecord } from "../record/state.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../record/state.js";
import { DelegatingState } from "../record/wrappers/delegating-state.js";

export type LabelsById = ReadonlyMap<string, Readonly<Record<string, string>>>;

export function labelsById(resources: readonly Resource[]): LabelsById {
  return new Map(resources.map((r) => [resourceId(r), r.labels]));
}

const sameLabels = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): boolean =>
  a !== undefined && Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);

/** What a rewrite keeps of the record it replaces. */
export type Stamp = Pick<ResourceRecord, "labels" | "adopted">;

const stampOf = (r: ResourceRecord): Stamp => ({
  ...(r.labels === undefined ? {} : { labels: r.labels }),
  ...(r.adopted === undefined ? {} : { adopted: r.adopted }),
});

/** The record as it should be stored: current labels, and the adoption mark of the record it replaces. */
export function stampRecord(record: ResourceRecord, labels: LabelsById, previous: Stamp | undefined): ResourceRecord {
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

/**
 * The backend with every write stamped (see stampRecord); everything else goes straight through.
 * Of a record written here it keeps only what a later rewrite reads — its labels and adoption
 * mark — and only when the stamp cannot be made again from `labels` and `before`: not a second
 * copy of every record an apply writes.
 */
export function labellingState(backend: StateBackend, labels: LabelsById, before: StateSnapshot): StateBackend {
  return new LabellingState(backend, labels, before);
}

/** The stamping wrapper: `write` stamps; every other member passes through (record/wrappers/delegating-state.ts). */
class LabellingState extends DelegatingState {
  private readonly written = new Map<string, Stamp>();

  constructor(
    backend: StateBackend,
    private readonly labels: LabelsById,
    private readonly before: StateSnapshot,
  ) {
    super(backend);
  }

  override async write(record: ResourceRecord): Promise<void> {
    const stamped = stampRecord(record, this.labels, this.written.get(record.id) ?? this.before.resources.get(record.id));
    await this.backend.write(stamped);
    if (stamped.adopted !== undefined || !this.labels.has(record.id)) this.written.set(record.id, stampOf(stamped));
    else this.written.delete(record.id);
  }

  override async writeClaiming(entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]> {
    const stamped = entries.map((e) => ({
      ...e,
      record: stampRecord(e.record, this.labels, this.written.get(e.record.id) ?? this.before.resources.get(e.record.id)),
    }));
    const rows = await this.backend.writeClaiming(stamped, now);
    for (const r of wonRecords(stamped, rows)) if (r.adopted !== undefined || !this.labels.has(r.id)) this.written.set(r.id, stampOf(r));
    return rows;
  }
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
