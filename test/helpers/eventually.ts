/** Polling until something holds: the one way the tests wait for what happens in its own time. */
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `read` every `pauseMs` until `check` holds (at most `ms`); the error says what was read
 * last, and `context()` (a replica's log, a dump of the daemon's state).
 */
export async function eventually<T>(
  read: () => Promise<T> | T,
  check: (v: T) => boolean,
  ms = 20_000,
  context: () => string = () => "",
  pauseMs = 100,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last: ${JSON.stringify(v)?.slice(0, 800)}${context()}`);
    await sleep(pauseMs);
  }
}
