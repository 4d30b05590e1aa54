/**
 * Whether the tests' PostgreSQL answers, asked once per run by `vitest.config.ts` (a TCP connect,
 * so no file needs `pg` to learn it). Under `GATESYNC_REQUIRE_SERVICES=1` (`.ci/run`) nobody asks:
 * every file runs and a missing PostgreSQL fails the files that need it.
 */
import { connect } from "node:net";

/** The URL the PostgreSQL tests connect to (test/helpers/postgres.ts reads the same). */
export const testPostgresUrl = process.env.GATESYNC_TEST_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

/** Whether a missing service is a failure rather than a reason to leave its tests out. */
export const servicesRequired = process.env.GATESYNC_REQUIRE_SERVICES === "1";

/** Resolves whether something accepts a TCP connection at the URL's host and port within `ms`. */
export async function postgresAnswers(url = testPostgresUrl, ms = 1_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname === "" ? "127.0.0.1" : hostname, port: Number(port === "" ? 5432 : port) });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
