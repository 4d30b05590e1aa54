/** A question on the terminal, answered only by typing `yes` (apply's confirmation, `state resolve --all-orphans`). */
import { createInterface } from "node:readline/promises";

/** Asks on the terminal; Ctrl-C (or `signal`) answers no. */
export async function ask(question: string, signal: AbortSignal): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  // the terminal is in raw mode while asking: Ctrl-C reaches readline, not the process
  rl.on("SIGINT", () => process.kill(process.pid, "SIGINT"));
  try {
    return (await rl.question(question, { signal })).trim().toLowerCase() === "yes";
  } catch (err) {
    if (signal.aborted) return false;
    throw err;
  } finally {
    rl.close();
  }
}
