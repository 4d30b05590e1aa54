/**
 * A real browser for page tests: Debian's Chromium driven by playwright-core (no browser
 * download). `.ci/run` installs the package when it is missing.
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { projectRoot } from "./temp-repo.js";

export const chromiumPath = process.env.GATESYNC_CHROMIUM ?? "/usr/bin/chromium";

/** Where tests write screenshots (ignored by git). */
export const screenshotDir = path.join(projectRoot, "test-output", "screenshots");

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath))
    throw new Error(`no Chromium at ${chromiumPath}: install Debian's package (apt-get install chromium; .ci/run does it) or set GATESYNC_CHROMIUM`);
  await mkdir(screenshotDir, { recursive: true });
  // the flags keep Chromium off the network it would call at start (this machine has none)
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Console errors and CSP violations of a page, collected as they happen. */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (err) => problems.push(err.message));
  return problems;
}
