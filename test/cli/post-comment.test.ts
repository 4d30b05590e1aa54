/**
 * examples/ci/post-comment.mjs finds only its own comment — written by the token's user and
 * starting with the marker — across every page of comments. It once updated the first comment
 * starting with the marker whoever wrote it (anyone who can comment could have the plan written
 * into a comment they can edit back to "0 changes"), and read only the first 100 comments
 * (past them, every run posted a new plan comment).
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { fakeCommentApi } from "../helpers/comment-api.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
const run = promisify(execFile);
const script = path.join(projectRoot, "examples/ci/post-comment.mjs");
const marker = "<!-- gatesync-plan -->";

const envFor = (platform: "github" | "gitlab", url: string, token: string): Record<string, string> =>
  platform === "github"
    ? { GITHUB_API_URL: url, GITHUB_REPOSITORY: "o/r", GATESYNC_PR_NUMBER: "7", GITHUB_TOKEN: token, GITHUB_ACTIONS: "true" }
    : { CI_API_V4_URL: url, CI_PROJECT_ID: "42", CI_MERGE_REQUEST_IID: "7", GITLAB_API_TOKEN: token };

describe("post-comment.mjs finds only its own comment, on every page", () => {
  for (const platform of ["github", "gitlab"] as const) {
    it(`${platform}: a planted marker by another author is left alone; past 100 comments its own is still found and updated`, async () => {
      const api = await fakeCommentApi(platform, { "ci-token": "gatesync-bot", "mallory-token": "mallory" });
      try {
        const dir = await tempRepo({ "comment.md": "### gatesync plan\nfirst\n" });
        const env = { ...process.env, ...envFor(platform, api.url, "ci-token") };
        // someone plants the marker first
        api.comments.push({ id: 1, body: `${marker}\n0 changes (trust me)`, author: "mallory" });
        const first = await run(process.execPath, [script, platform, "comment.md"], { cwd: dir, env });
        expect(first.stdout).toContain("posted");
        expect(api.comments[0]!.body).toBe(`${marker}\n0 changes (trust me)`);
        // a long discussion follows: 150 comments, another planted marker among them
        for (let i = 0; i < 150; i++)
          api.comments.push({ id: api.comments.length + 1, body: i === 70 ? `${marker}\nplanted` : `comment ${i}`, author: i % 2 === 0 ? "alice" : "mallory" });
        await import("node:fs/promises").then(async (fs) => fs.writeFile(path.join(dir, "comment.md"), "### gatesync plan\nsecond\n"));
        const second = await run(process.execPath, [script, platform, "comment.md"], { cwd: dir, env });
        expect(second.stdout).toContain("updated");
        const own = api.comments.filter((c) => c.author === "gatesync-bot");
        expect(own).toHaveLength(1);
        expect(own[0]!.body).toContain("second");
        expect(api.comments.filter((c) => c.author !== "gatesync-bot" && c.body.includes("gatesync plan"))).toEqual([]);
        expect(api.writes.every((w) => w.author === "gatesync-bot")).toBe(true);
        // and once more with its own comment on the first page and 150 after it: still one
        const third = await run(process.execPath, [script, platform, "comment.md"], { cwd: dir, env });
        expect(third.stdout).toContain("updated");
        expect(api.comments.filter((c) => c.author === "gatesync-bot")).toHaveLength(1);
      } finally {
        await api.close();
      }
    });
  }

  it("github: the Actions token (GET /user answers 403) writes as github-actions[bot] and finds that bot's comment only", async () => {
    const api = await fakeCommentApi("github", { "actions-token": "github-actions[bot]" }, 403);
    try {
      const dir = await tempRepo({ "comment.md": "### gatesync plan\nfirst\n" });
      api.comments.push({ id: 1, body: `${marker}\nplanted`, author: "mallory" });
      const env = { ...process.env, ...envFor("github", api.url, "actions-token") };
      expect((await run(process.execPath, [script, "github", "comment.md"], { cwd: dir, env })).stdout).toContain("posted");
      expect((await run(process.execPath, [script, "github", "comment.md"], { cwd: dir, env })).stdout).toContain("updated");
      expect(api.comments.map((c) => c.author)).toEqual(["mallory", "github-actions[bot]"]);
      expect(api.comments[0]!.body).toBe(`${marker}\nplanted`);
    } finally {
      await api.close();
    }
  });

  it("outside Actions, a token whose user cannot be read stops with a hint, and following the hint works", async () => {
    const api = await fakeCommentApi("github", { "app-token": "my-app[bot]" }, 403);
    try {
      const dir = await tempRepo({ "comment.md": "### gatesync plan\n" });
      const env = { ...process.env, ...envFor("github", api.url, "app-token"), GITHUB_ACTIONS: "" };
      const failed = await run(process.execPath, [script, "github", "comment.md"], { cwd: dir, env }).catch((err: { code: number; stderr: string }) => err);
      expect("code" in failed && failed.code).toBe(1);
      expect(failed.stderr).toContain("set GATESYNC_COMMENT_AUTHOR to its login");
      expect(api.comments).toEqual([]);
      const hinted = await run(process.execPath, [script, "github", "comment.md"], { cwd: dir, env: { ...env, GATESYNC_COMMENT_AUTHOR: "my-app[bot]" } });
      expect(hinted.stdout).toContain("posted");
      expect(
        (await run(process.execPath, [script, "github", "comment.md"], { cwd: dir, env: { ...env, GATESYNC_COMMENT_AUTHOR: "my-app[bot]" } })).stdout,
      ).toContain("updated");
      expect(api.comments).toHaveLength(1);
    } finally {
      await api.close();
    }
  });
});
