/**
 * Ctrl-C (SIGINT) and SIGTERM during `gatesync apply`. Without a handler Node ends the process
 * at once: calls in flight are never recorded (a create that reached the server becomes a
 * duplicate on the next apply), no summary says what was applied, and the progress bar leaves
 * the terminal with its cursor hidden and line wrapping off.
 *
 * The first signal stops the apply as the daemon stops on SIGTERM: no new call starts, the
 * calls in flight finish within their deadline (retries.timeoutMs) and are recorded, and the
 * summary is printed. A second signal stops waiting: the connections are closed, so each call
 * still in flight ends at once — a call that cannot be repeated is recorded in doubt (the
 * summary lists it with the `state resolve` commands), a repeatable one is simply not done.
 * Further signals are ignored: the state is being written.
 */

export interface Interrupt {
  /** Aborted by the first signal. */
  readonly signal: AbortSignal;
  /** The first signal received, if any. */
  received(): NodeJS.Signals | undefined;
  /** Removes the handlers (the process is ended by signals again). */
  dispose(): void;
}

export interface InterruptHooks {
  /** The first signal: the apply stops starting calls. */
  readonly onStop: (signal: NodeJS.Signals) => void;
  /** The second: stop waiting for calls in flight. */
  readonly onAbandon: (signal: NodeJS.Signals) => void;
  /** Any later one: the outcomes are being recorded; it changes nothing. */
  readonly onIgnored?: (signal: NodeJS.Signals) => void;
}

/** Handles SIGINT and SIGTERM until disposed. */
export function interruptOnSignals(hooks: InterruptHooks): Interrupt {
  const controller = new AbortController();
  let first: NodeJS.Signals | undefined;
  let count = 0;
  const handle = (signal: NodeJS.Signals): void => {
    count++;
    if (count === 1) {
      first = signal;
      controller.abort(new Error(`stopped by ${signal}`));
      hooks.onStop(signal);
    } else if (count === 2) {
      hooks.onAbandon(signal);
    } else {
      hooks.onIgnored?.(signal);
    }
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) process.on(s, handle);
  return {
    signal: controller.signal,
    received: () => first,
    dispose: () => {
      for (const s of signals) process.off(s, handle);
    },
  };
}

/** The conventional exit status of a process stopped by `signal` (130 for SIGINT, 143 for SIGTERM). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === "SIGINT" ? 130 : 143;
}

/**
 * The first SIGINT or SIGTERM a long-running command (run, sandbox, demo) is stopped by. Listened
 * for from the call: a command calls it before it prints the line a script waits for, so that a
 * signal sent right after that line stops it rather than the process.
 */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
