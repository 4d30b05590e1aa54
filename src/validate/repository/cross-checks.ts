/**
 * Checks across resources: duplicate names, references to resources that do not exist, and
 * two resources addressing one server object. Names and identities are checked over every
 * resource written in the repository, valid or not, so they are reported together with the
 * other errors rather than after those are fixed; suggestions consider every written name.
 */
import { closest } from "fastest-levenshtein";
import type { Deferred } from "../../deferred.js";
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import type { KindName, Spec } from "../../kinds/kind.js";
import { kindModule, providedApiIds } from "../../kinds/registry.js";
import type { Resource } from "../../kinds/resource.js";
import type { PathSegment } from "../../text/field-path.js";
import { formatPath } from "../../text/field-path.js";
import { repositoryPath } from "../../file-paths.js";
import { errorAt } from "../findings.js";
import type { Locate } from "../findings.js";

/** A resource as written, valid or not. */
export interface WrittenResource {
  readonly kind: KindName;
  readonly name: string;
  /** The spec as written (an object; `{}` when it is not one): its JSON text in a one-shot command. */
  readonly spec: Deferred<Spec>;
  readonly source: { readonly file: string; readonly index: number; readonly line: number };
}

const keyOf = (s: { readonly file: string; readonly index: number }): string => `${s.file}\0${s.index}`;

/** Where a finding about a resource is: its file, its name, the path and its line and column. */
type At = (
  r: { readonly kind: string; readonly name: string; readonly source: WrittenResource["source"] },
  p: readonly PathSegment[],
) => Omit<Diagnostic, "severity" | "code" | "message">;

/** The resources without such errors, and the errors. */
export function crossCheck(
  resources: readonly Resource[],
  written: readonly WrittenResource[],
  locate: Locate,
  repositoryPrefix: string,
): { valid: Resource[]; diagnostics: Diagnostic[] } {
  const at: At = (r, p) => ({
    file: r.source.file,
    resource: `${r.kind}/${r.name}`,
    path: formatPath(p),
    ...locate(r.source.file, r.source.index, p),
  });
  // the sources of the resources an error makes invalid
  const bad = new Set<string>();
  const { names, diagnostics } = duplicateNames(written, bad, at, repositoryPrefix);
  diagnostics.push(...unresolvedReferences(resources, names, bad, at));
  diagnostics.push(...duplicateIdentities(written, bad, at, repositoryPrefix));
  return { valid: resources.filter((r) => !bad.has(keyOf(r.source))), diagnostics };
}

/** Every name written, and an error at each definition of a name defined more than once. */
function duplicateNames(
  written: readonly WrittenResource[],
  bad: Set<string>,
  at: At,
  repositoryPrefix: string,
): { names: WrittenNames; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const names = new WrittenNames();
  // the names defined more than once, with every definition: a list per name only for those
  const definitions = new Map<string, WrittenResource[]>();
  for (const w of written) {
    const first = names.get(w.kind, w.name);
    if (first === undefined) {
      names.add(w);
      continue;
    }
    bad.add(keyOf(w.source));
    const id = `${w.kind}/${w.name}`;
    const all = definitions.get(id);
    if (all === undefined) definitions.set(id, [first, w]);
    else all.push(w);
  }
  // reported at every definition: the one just added may be any of them (it need not sort last)
  for (const [id, all] of definitions) {
    for (const w of all) {
      diagnostics.push(
        errorAt(
          ErrorCode.DUPLICATE_NAME,
          at(w, ["metadata", "name"]),
          `${id} is defined ${all.length === 2 ? "twice" : `${all.length} times`}; also at ${otherPlaces(all, w, repositoryPrefix)}`,
          "names are unique per kind: rename the new one (to rename a resource, give it the new name in one place: docs/user/renames.md)",
        ),
      );
    }
  }
  return { names, diagnostics };
}

/** An error at each reference to a name no resource is written with, with the nearest names as its hint. */
function unresolvedReferences(resources: readonly Resource[], names: WrittenNames, bad: Set<string>, at: At): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  // one suggestion per missing name: a renamed API may leave thousands of references behind
  const hints = new Map<string, string>();
  for (const r of resources) {
    for (const ref of kindModule(r.kind).references(r.spec.read())) {
      // A target that is written but invalid has its own error; do not cascade.
      if (names.get(ref.kind, ref.name) !== undefined) continue;
      const missing = `${ref.kind}/${ref.name}`;
      let hint = hints.get(missing);
      if (hint === undefined) hints.set(missing, (hint = missingHint(ref, names.sortedNamesOf(ref.kind))));
      diagnostics.push(errorAt(ErrorCode.UNRESOLVED_REFERENCE, at(r, ref.path), `${ref.kind} \`${ref.name}\` does not exist in this repository`, hint));
      bad.add(keyOf(r.source));
    }
  }
  return diagnostics;
}

/** Places listed in a duplicate name's message; the rest are counted (a name defined 10,000 times would list 10,000 places in each of 10,000 messages). */
const placesShown = 10;

/** Where the other definitions of a name are, the first `placesShown` of them, named from the repository's root. */
function otherPlaces(all: readonly WrittenResource[], w: WrittenResource, prefix: string): string {
  const others = all.filter((o) => o !== w);
  const shown = others.slice(0, placesShown).map((o) => `${repositoryPath(prefix, o.source.file)}:${o.source.line}`);
  return `${shown.join(", ")}${others.length > placesShown ? `, and ${others.length - placesShown} more` : ""}`;
}

/** What to do about a reference to a name not written: the closest written name of its kind, or define it. */
function missingHint(ref: { readonly kind: string; readonly name: string }, known: readonly string[]): string {
  const guess = known.length > 0 ? closest(ref.name, known) : undefined;
  return guess === undefined
    ? `define ${ref.kind}/${ref.name}, or give the raw id instead of a reference`
    : `did you mean \`${guess}\`? (known: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", ..." : ""})`;
}

/**
 * The first resource written under each name, by kind: no `kind/name` string made per resource
 * (100,000 of them were a few MB of the peak of a validation at 100,000 resources).
 */
class WrittenNames {
  readonly #byKind = new Map<string, Map<string, WrittenResource>>();
  readonly #sorted = new Map<string, readonly string[]>();

  get(kind: string, name: string): WrittenResource | undefined {
    return this.#byKind.get(kind)?.get(name);
  }

  add(w: WrittenResource): void {
    let named = this.#byKind.get(w.kind);
    if (named === undefined) {
      named = new Map<string, WrittenResource>();
      this.#byKind.set(w.kind, named);
    }
    named.set(w.name, w);
    this.#sorted.delete(w.kind);
  }

  /** The names written for a kind, sorted (once per kind: asked for each reference to a missing name). */
  sortedNamesOf(kind: string): readonly string[] {
    let sorted = this.#sorted.get(kind);
    if (sorted === undefined) this.#sorted.set(kind, (sorted = [...(this.#byKind.get(kind)?.keys() ?? [])].sort()));
    return sorted;
  }
}

/** Two written resources addressing one server object (an identity built from a missing field is none). */
function duplicateIdentities(written: readonly WrittenResource[], bad: Set<string>, at: At, repositoryPrefix: string): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const apiIds = providedApiIds(written);
  const identities = new Map<string, WrittenResource>();
  for (const w of written) {
    if (bad.has(keyOf(w.source))) continue;
    const id = kindModule(w.kind).identity(w.spec.read(), (name) => apiIds.get(name));
    // identities are built from the spec's fields; an invalid spec may lack them
    if (id === undefined || /\bundefined\b|\[object /.test(id)) continue;
    const first = identities.get(id);
    if (first === undefined) {
      identities.set(id, w);
      continue;
    }
    diagnostics.push(
      errorAt(
        ErrorCode.DUPLICATE_IDENTITY,
        at(w, ["spec"]),
        `${w.kind}/${w.name} and ${first.kind}/${first.name} (${repositoryPath(repositoryPrefix, first.source.file)}:${first.source.line}) address the same server object (${id})`,
        "each server object may be managed by one resource: remove or merge one of them",
      ),
    );
    bad.add(keyOf(w.source));
  }
  return diagnostics;
}
