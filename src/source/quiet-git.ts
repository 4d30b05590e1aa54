/**
 * A git command that prints nothing when it succeeds (`fetch --quiet`, `checkout --quiet`,
 * `clean -q`), run without simple-git: simple-git waits 50 ms after a process that wrote
 * nothing to stdout or stderr before it resolves (its completion detection, not configurable),
 * and the three commands between a push's webhook and its run cost 150 ms that way (measured:
 * 100/60/60 ms through simple-git against 35/15/8 ms through `execFile`). gitOutput is the same
 * for a command whose output is read (bounded in bytes: a repository's tag names are its data).
 */
import { execFile } from "node:child_process";

export interface QuietGitOptions {
  readonly cwd: string;
  /** The whole environment of the process (nothing inherited: no ambient GIT_* variable). */
  readonly env: Readonly<Record<string, string>>;
  /** Killed past this. */
  readonly timeoutMs: number;
}

/** Runs `git ...args`; rejects with git's own message (its standard error), never the command line. */
export async function quietGit(args: readonly string[], opts: QuietGitOptions): Promise<void> {
  await gitOutput(args, opts);
}

/**
 * Runs `git ...args` and resolves with what it printed, at most `maxBytes` (the process is
 * killed past it, and `tooLong` says why); rejects as quietGit does otherwise.
 */
export function gitOutput(
  args: readonly string[],
  opts: QuietGitOptions & { readonly maxBytes?: number; readonly tooLong?: () => Error; readonly input?: string; readonly answerCodes?: readonly number[] },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs, maxBuffer: opts.maxBytes ?? 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        // an exit code that is an answer, not a failure (`check-ignore`: 1, nothing ignored)
        if (err === null || (typeof err.code === "number" && opts.answerCodes?.includes(err.code) === true && !err.killed)) return resolve(stdout);
        if (opts.tooLong !== undefined && (err as { code?: unknown }).code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") return reject(opts.tooLong());
        const killed = err.killed ? `git ${args[0]} was stopped after ${opts.timeoutMs} ms` : undefined;
        reject(new Error(killed ?? (stderr.trim() !== "" ? stderr.trim() : `git ${args[0]} failed (exit code ${String(err.code)})`)));
      },
    );
    // what `--stdin` reads (refspecs of object ids), or nothing: git never waits on a terminal
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(opts.input ?? "");
  });
}
