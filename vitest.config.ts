import { defineConfig } from "vitest/config";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default", new SummaryReporter()],
  },
});
