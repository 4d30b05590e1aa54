/**
 * examples/ci/post-comment.mjs finds only its own comment — written by the token's user and
 * starting with the marker — across every page of comments. It once updated the first comment
 * starting with the marker whoever wrote it (anyone who can comment could have the plan written
 * into a comment they can edit back to "0 changes"), and read only the first 100 comments
 * (past them, every run posted a new plan comment).
 */
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
const run = promisify(execFile);
const script = path.join(projectRoot, "examples/ci/post-comment.mjs");
const marker = "<!-- gatesync-plan -->";

interface Comment {
  id: number;
  body: string;
  author: string;
}

/**
 * GitHub's issue comments or GitLab's notes on loopback, paginated as they are (Link header,
 * `page`/`per_page`, at most 100 a page), each comment with its author as the platform gives it.
 * `tokens`: which user each token writes as; `userStatus`: how GET /user answers (GitHub's
 * Actions token gets 403).
 */
async function fakeCommentApi(platform: "github" | "gitlab", tokens: Record<string, string>, userStatus = 200) {
  const comments: Comment[] = [];
  const writes: Array<{ method: string; id?: number; author: string }> = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (b: Buffer) => (text += b.toString()));
    req.on("end", () => {
      const token = String(platform === "github" ? (req.headers.authorization ?? "").replace("Bearer ", "") : req.headers["private-token"]);
      const who = tokens[token];
      const url = new URL(req.url ?? "/", "http://x");
      const reply = (status: number, body: unknown, headers: Record<string, string> = {}): void =>
        void res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
      if (who === undefined) return reply(401, { message: "Bad credentials" });
      const shape = (c: Comment): unknown =>
        platform === "github"
          ? { id: c.id, body: c.body, user: { login: c.author } }
          : { id: c.id, body: c.body, author: { username: c.author }, system: false };
      if (url.pathname === "/user")
        return userStatus === 200
          ? reply(200, platform === "github" ? { login: who } : { username: who })
          : reply(userStatus, { message: "Resource not accessible by integration" });
      const list = /^\/(repos\/o\/r\/issues\/7\/comments|projects\/42\/merge_requests\/7\/notes)$/.test(url.pathname);
      const one = /^\/(?:repos\/o\/r\/issues\/comments|projects\/42\/merge_requests\/7\/notes)\/(\d+)$/.exec(url.pathname);
      if (list && req.method === "GET") {
        const perPage = Math.min(100, Number(url.searchParams.get("per_page") ?? 30));
        const page = Number(url.searchParams.get("page") ?? 1);
        const last = Math.max(1, Math.ceil(comments.length / perPage));
        const next = new URL(url.href.replace("http://x", `http://127.0.0.1:${(server.address() as AddressInfo).port}`));
        next.searchParams.set("page", String(page + 1));
        return reply(200, comments.slice((page - 1) * perPage, page * perPage).map(shape), page < last ? { link: `<${next.href}>; rel="next"` } : {});
      }
      if (list && req.method === "POST") {
        const c = { id: comments.length + 1, body: (JSON.parse(text) as { body: string }).body, author: who };
        comments.push(c);
        writes.push({ method: "POST", author: who });
        return reply(201, shape(c));
      }
      const existing = one === null ? undefined : comments.find((c) => c.id === Number(one[1]));
      if (existing !== undefined && (req.method === "PATCH" || req.method === "PUT")) {
        existing.body = (JSON.parse(text) as { body: string }).body;
        writes.push({ method: req.method, id: existing.id, author: existing.author });
        return reply(200, shape(existing));
      }
      reply(404, { message: "Not Found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, comments, writes, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

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
