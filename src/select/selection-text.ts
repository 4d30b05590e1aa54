/** The plan header's line on a partial plan: what was selected and how much was left out. */
import type { PlanSelection } from "./selection.js";

export function selectionLine(s: PlanSelection): string {
  const asked = [
    ...(s.configSelector === undefined ? [] : [`config selector \`${s.configSelector}\``]),
    ...s.targets.map((t) => `--target ${t}`),
    ...s.kinds.map((k) => `--kind ${k}`),
    ...(s.selector === undefined ? [] : [`--selector \`${s.selector}\``]),
    ...s.excludes.map((e) => `--exclude ${e}`),
  ];
  const pulled = s.pulledIn.length === 0 ? "" : `; pulled in by reference: ${s.pulledIn.map((p) => `${p.id} (by ${p.by.join(", ")})`).join(", ")}`;
  const records =
    s.recordsOutside === 0
      ? ""
      : `; ${s.recordsOutside} state record${s.recordsOutside === 1 ? "" : "s"} of removed resources outside the selection left alone`;
  return `Selection: ${asked.join(", ")} — ${s.selected} of ${s.selected + s.leftOut} resources selected, ${s.leftOut} left out${pulled}${records}.`;
}
