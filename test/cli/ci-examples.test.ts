import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { cliArgs } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
const run = promisify(execFile);
const script = path.join(projectRoot, "examples/ci/post-comment.mjs");

interface Comment {
  id: number;
  body: string;
  /** Who wrote it, as each platform says (post-comment.mjs updates only its token user's comment). */
  user?: { login: string };
  author?: { username: string };
}

/** A fake of GitHub's issue-comments and GitLab's merge-request-notes APIs on loopback. */
async function fakeCommentApi(): Promise<{ url: string; comments: Comment[]; auth: string[]; close: () => Promise<void> }> {
  const comments: Comment[] = [{ id: 1, body: "LGTM" }];
  const auth: string[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (b: Buffer) => (text += b.toString()));
    req.on("end", () => {
      auth.push(String(req.headers.authorization ?? req.headers["private-token"]));
      const url = new URL(req.url ?? "/", "http://x");
      const list = /^\/(repos\/o\/r\/issues\/7\/comments|projects\/42\/merge_requests\/7\/notes)$/.test(url.pathname);
      const one = /^\/(?:repos\/o\/r\/issues\/comments|projects\/42\/merge_requests\/7\/notes)\/(\d+)$/.exec(url.pathname);
      const reply = (status: number, body: unknown): void => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      const login = req.headers.authorization === undefined ? "gitlab-bot" : "gatesync-bot";
      if (url.pathname === "/user" && req.method === "GET") return reply(200, { login, username: login });
      if (list && req.method === "GET") return reply(200, comments);
      if (list && req.method === "POST") {
        const c = { id: comments.length + 1, body: (JSON.parse(text) as { body: string }).body, user: { login }, author: { username: login } };
        comments.push(c);
        return reply(201, c);
      }
      const existing = one === null ? undefined : comments.find((c) => c.id === Number(one[1]));
      if (existing !== undefined && (req.method === "PATCH" || req.method === "PUT")) {
        existing.body = (JSON.parse(text) as { body: string }).body;
        return reply(200, existing);
      }
      reply(404, { message: "Not Found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, comments, auth, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("CI examples: one comment per merge request, updated", () => {
  for (const platform of ["github", "gitlab"] as const) {
    it(`${platform}: posts once, then updates the same comment`, async () => {
      const api = await fakeCommentApi();
      try {
        const dir = await tempRepo({ "comment.md": "### gatesync plan\nfirst\n" });
        const env =
          platform === "github"
            ? { GITHUB_API_URL: api.url, GITHUB_REPOSITORY: "o/r", GATESYNC_PR_NUMBER: "7", GITHUB_TOKEN: "gh-token" }
            : { CI_API_V4_URL: api.url, CI_PROJECT_ID: "42", CI_MERGE_REQUEST_IID: "7", GITLAB_API_TOKEN: "gl-token" };
        const first = await run(process.execPath, [script, platform, "comment.md"], { cwd: dir, env: { ...process.env, ...env } });
        expect(first.stdout).toContain("posted");
        await writeFile(path.join(dir, "comment.md"), "### gatesync plan\nsecond\n");
        const second = await run(process.execPath, [script, platform, "comment.md"], { cwd: dir, env: { ...process.env, ...env } });
        expect(second.stdout).toContain("updated");
        expect(api.comments).toHaveLength(2);
        expect(api.comments[0]!.body).toBe("LGTM");
        expect(api.comments[1]!.body).toContain("second");
        expect(api.comments[1]!.body).not.toContain("first");
        expect(api.auth.every((a) => a === (platform === "github" ? "Bearer gh-token" : "gl-token"))).toBe(true);
      } finally {
        await api.close();
      }
    });
  }

  it("the comment holds the located validation errors when the merge request does not validate", async () => {
    const bin = await tempRepo();
    // `gatesync` on PATH, as the CI job installs it
    await mkdir(path.join(bin, "bin"));
    await writeFile(
      path.join(bin, "bin/gatesync"),
      `#!/bin/sh\nexec "${process.execPath}" ${cliArgs()
        .map((a) => `"${a}"`)
        .join(" ")} "$@"\n`,
    );
    await chmod(path.join(bin, "bin/gatesync"), 0o755);
    const repo = await tempRepo({
      "gatesync.yaml":
        "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets:\n  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY }\nstate: { backend: sqlite, path: ./state.db }\n",
      "config/k.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: fast"),
    });
    const env = { ...process.env, PATH: `${path.join(bin, "bin")}:${process.env.PATH ?? ""}` };
    const r = await run("bash", [path.join(projectRoot, "examples/ci/plan-comment.sh"), "gatesync.yaml", "config"], { cwd: repo, env }).catch(
      (e: { code: number; stdout: string }) => e,
    );
    expect((r as { code?: number }).code).toBe(1);
    const comment = await readFile(path.join(repo, "comment.md"), "utf8");
    expect(comment).toContain("does not validate");
    expect(comment).toMatch(/error\[SCHEMA_VIOLATION\] .*k\.yaml:\d+:\d+ OrgKey\/acme spec\.rate/);
    // and the plan when it validates
    await writeFile(path.join(repo, "config/k.yaml"), doc("OrgKey", "acme", "keyId: org-acme\nrate: 5"));
    const ok = await run("bash", [path.join(projectRoot, "examples/ci/plan-comment.sh"), "gatesync.yaml", "config"], { cwd: repo, env }).catch(
      (e: { code: number }) => e,
    );
    expect((ok as { code?: number }).code).toBe(2);
    expect(await readFile(path.join(repo, "comment.md"), "utf8")).toContain("OrgKey/acme");
  }, 60_000);
});
