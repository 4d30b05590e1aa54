/** A progress line on a terminal: done/total, rate and ETA (cli-progress). */
import { SingleBar } from "cli-progress";
import type { Progress } from "./types.js";

/**
 * The bar hides the cursor and turns line wrapping off while it runs; `stop()` (idempotent)
 * shows the cursor and turns wrapping back on. Once stopped — the apply ended, or was
 * interrupted and prints its own lines — later updates draw nothing.
 */
export function terminalProgress(stream: NodeJS.WriteStream): Progress {
  const bar = new SingleBar({
    stream,
    format: "applying [{bar}] {value}/{total} | {rate}/s | ETA {eta_formatted} | {last}",
    hideCursor: true,
    clearOnComplete: false,
    barsize: 24,
  });
  let startedAt = 0;
  let done = 0;
  let running = false;
  return {
    start: (total) => {
      startedAt = performance.now();
      running = true;
      bar.start(total, 0, { rate: "0.0", last: "" });
    },
    done: (id, outcome) => {
      done++;
      if (!running) return;
      const seconds = (performance.now() - startedAt) / 1000;
      bar.update(done, { rate: (done / Math.max(seconds, 0.001)).toFixed(1), last: `${id} ${outcome}` });
    },
    stop: () => {
      if (!running) return;
      running = false;
      bar.stop();
    },
  };
}
