/** A small inline SVG chart of the last runs: duration as bars, HTTP calls as a line. No script, no inline style. */
import { html, plural } from "./html.js";
import type { Html } from "./html.js";
import type { RunLine } from "../history/run-record.js";

const width = 640;
const height = 160;
const pad = 28;

export function runChart(entries: readonly RunLine[]): Html {
  const runs = entries.slice(0, 30).reverse();
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  const durations = runs.map((e) => e.record.durationMs);
  const calls = runs.map((e) => {
    const c = e.record.calls;
    // every request sent, batch calls included
    return c === undefined ? 0 : c.total;
  });
  const maxDuration = Math.max(1, ...durations);
  const maxCalls = Math.max(1, ...calls);
  const step = (width - 2 * pad) / runs.length;
  const y = (v: number, max: number): number => height - pad - ((height - 2 * pad) * v) / max;
  const bars = runs.map((e, i) => {
    const top = y(durations[i]!, maxDuration);
    return html`<rect class="bar bar-${e.record.outcome}" x="${(pad + i * step + step * 0.15).toFixed(1)}" y="${top.toFixed(1)}" width="${(step * 0.7).toFixed(1)}" height="${(height - pad - top).toFixed(1)}"><title>run ${e.seq}: ${e.record.outcome}, ${durations[i]} ms, ${plural(calls[i]!, "call")}</title></rect>`;
  });
  const points = calls.map((c, i) => `${(pad + i * step + step / 2).toFixed(1)},${y(c, maxCalls).toFixed(1)}`).join(" ");
  return html`<figure class="chart">
<svg viewBox="0 0 ${width} ${height}" role="img" aria-label="Duration and calls of the last ${plural(runs.length, "run")}" xmlns="http://www.w3.org/2000/svg">
<line class="axis" x1="${pad}" y1="${height - pad}" x2="${width - pad}" y2="${height - pad}"/>
<text class="label" x="${pad}" y="${pad - 10}">${maxDuration} ms</text>
<text class="label label-calls" x="${width - pad}" y="${pad - 10}" text-anchor="end">${plural(maxCalls, "call")}</text>
${bars}
<polyline class="calls" points="${points}" fill="none"/>
</svg>
<figcaption>Last ${plural(runs.length, "run")}, oldest left: bars are durations, the line is HTTP calls to the interfaces.</figcaption>
</figure>`;
}
