import { defaultHistoryBound } from "../../src/config/history-section.js";
import { RunHistory } from "../../src/daemon/history/run-history.js";
import type { HistoryStore } from "../../src/record/history/history.js";

/** An environment's run view as the replica running it holds it (the default bound; a failed write or read throws). */
export function leaderRunView(store: HistoryStore, window?: number): RunHistory {
  return new RunHistory({
    store,
    bound: () => defaultHistoryBound,
    replica: "r1",
    follows: () => false,
    syncedHere: () => true,
    onError: (err) => {
      throw err;
    },
    ...(window === undefined ? {} : { window }),
  });
}
