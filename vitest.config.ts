import { defineConfig } from "vitest/config";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // records compared by what their payloads hold (test/helpers/payload-equality.ts)
    setupFiles: ["test/helpers/payload-equality.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default", new SummaryReporter()],
    // the suite runs on CI runners (CI=true there), but the commands it runs stand for a user's
    // own machine: `gatesync plan` refuses an empty state in CI. The tests of that set CI themselves.
    env: { CI: "" },
  },
});
