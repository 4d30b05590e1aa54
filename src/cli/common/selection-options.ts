/** `--target`, `--exclude`, `--kind`, `--selector` of plan and apply. */
import { UsageError } from "../../errors.js";
import type { Plan } from "../../plan/plan.js";
import type { SelectionRequest } from "../../select/selection.js";

export interface SelectionFlags {
  readonly target?: string[];
  readonly exclude?: string[];
  readonly kind?: string[];
  readonly selector?: string;
}

/** Commander's collector of a repeatable option. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export const selectionHelp = {
  target: "only this resource and what it references (repeatable)",
  exclude: "leave this resource out (repeatable; wins over --target)",
  kind: "only resources of this kind (repeatable)",
  selector: "only resources whose labels match: team=storefront,tier!=internal, team in (a,b)",
};

export function selectionFromFlags(flags: SelectionFlags): SelectionRequest | undefined {
  const request = {
    targets: flags.target ?? [],
    excludes: flags.exclude ?? [],
    kinds: flags.kind ?? [],
    ...(flags.selector === undefined ? {} : { selector: flags.selector }),
  };
  return request.targets.length + request.excludes.length + request.kinds.length === 0 && flags.selector === undefined ? undefined : request;
}

/** The selection an apply uses: the saved plan's (the flags may not change it), else the flags'. */
export function applySelection(flags: SelectionFlags, saved: Plan | undefined, configSelector: string | undefined): SelectionRequest | undefined {
  const fromFlags = selectionFromFlags(flags);
  if (saved === undefined) return fromFlags;
  if (fromFlags !== undefined)
    throw new UsageError(
      "--target, --exclude, --kind and --selector cannot be given with --plan: the saved plan's selection applies",
      "make a new plan with the selection you want",
    );
  const s = saved.selection;
  if ((s?.configSelector ?? undefined) !== configSelector) {
    throw new UsageError(
      `the saved plan was made under config selector ${JSON.stringify(s?.configSelector ?? "(none)")}; the config now says ${JSON.stringify(configSelector ?? "(none)")}`,
      "make a new plan with this config",
    );
  }
  return s === undefined
    ? undefined
    : { targets: s.targets, excludes: s.excludes, kinds: s.kinds, ...(s.selector === undefined ? {} : { selector: s.selector }) };
}

/** `--allow-mass-deactivation` of plan, apply and run --once. */
export const massDeactivationHelp =
  "lift the guard against mass deactivation for this run: switch off every orphan `orphans: deactivate` would, however many (docs/user/renames.md)";
