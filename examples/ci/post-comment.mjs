#!/usr/bin/env node
// Posts a file as ONE comment on the merge request, updating it on later pipelines (no new
// comment per run). Node >= 20, no dependencies. Usage: node post-comment.mjs github|gitlab FILE
//   github: GITHUB_API_URL, GITHUB_REPOSITORY, GATESYNC_PR_NUMBER, GITHUB_TOKEN
//   gitlab: CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID, GITLAB_API_TOKEN
// GATESYNC_COMMENT_DRY_RUN=1 prints what it would send instead of sending it.
//
// The comment to update is this job's own: written by the token's user (GitHub: GET /user; the
// Actions GITHUB_TOKEN cannot read it and writes as github-actions[bot]; GitLab: GET /user) and
// starting with the marker. A comment by anyone else is never touched, whatever it starts with:
// otherwise anyone who can comment could plant the marker and have the plan written into a
// comment they can edit. Every page of comments is read (the Link header's rel="next", on the
// API's own host only), so a long discussion does not get a new plan comment per run.
// GATESYNC_COMMENT_AUTHOR names the author explicitly (a login on GitHub, a username on GitLab).
/* global fetch, URL */
import { readFileSync } from "node:fs";

const marker = "<!-- gatesync-plan -->";
const [platform, file] = process.argv.slice(2);
const env = process.env;
const need = (name) => {
  if (!env[name]) throw new Error(`${name} is not set`);
  return env[name];
};

const api = {
  github: () => ({
    base: need("GITHUB_API_URL"),
    list: `${env.GITHUB_API_URL}/repos/${need("GITHUB_REPOSITORY")}/issues/${need("GATESYNC_PR_NUMBER")}/comments?per_page=100`,
    create: `${env.GITHUB_API_URL}/repos/${env.GITHUB_REPOSITORY}/issues/${env.GATESYNC_PR_NUMBER}/comments`,
    update: (id) => `${env.GITHUB_API_URL}/repos/${env.GITHUB_REPOSITORY}/issues/comments/${id}`,
    updateMethod: "PATCH",
    headers: { authorization: `Bearer ${need("GITHUB_TOKEN")}`, accept: "application/vnd.github+json" },
    authorOf: (c) => c.user?.login,
    // the Actions token is an installation token: GET /user answers 403, and it writes as this bot
    tokenUserFallback: (status) => (status === 403 && env.GITHUB_ACTIONS === "true" ? "github-actions[bot]" : undefined),
  }),
  gitlab: () => ({
    base: need("CI_API_V4_URL"),
    list: `${env.CI_API_V4_URL}/projects/${need("CI_PROJECT_ID")}/merge_requests/${need("CI_MERGE_REQUEST_IID")}/notes?per_page=100&sort=asc`,
    create: `${env.CI_API_V4_URL}/projects/${env.CI_PROJECT_ID}/merge_requests/${env.CI_MERGE_REQUEST_IID}/notes`,
    update: (id) => `${env.CI_API_V4_URL}/projects/${env.CI_PROJECT_ID}/merge_requests/${env.CI_MERGE_REQUEST_IID}/notes/${id}`,
    updateMethod: "PUT",
    headers: { "private-token": need("GITLAB_API_TOKEN") },
    authorOf: (c) => (c.system === true ? undefined : c.author?.username),
    tokenUserFallback: () => undefined,
  }),
};

const dryRun = env.GATESYNC_COMMENT_DRY_RUN === "1";

async function request(method, url, headers, body) {
  const res = await fetch(url, { method, headers: { ...headers, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) {
    const err = new Error(`${method} ${url.replace(/\?.*/, "")}: ${res.status} ${(await res.text()).slice(0, 300)}`);
    err.status = res.status;
    throw err;
  }
  return { json: await res.json(), link: res.headers.get("link") };
}

async function send(method, url, headers, body) {
  if (dryRun) {
    process.stdout.write(`${method} ${url}\n${body === undefined ? "" : `${JSON.stringify(body)}\n`}`);
    return {};
  }
  return (await request(method, url, headers, body)).json;
}

/** The next page's address from a Link header, if it is on the API's own origin (the token goes with it). */
function nextPage(link, base) {
  const next = /<([^>]+)>\s*;\s*rel="?next"?/.exec(link ?? "")?.[1];
  if (next === undefined) return undefined;
  const url = new URL(next, base);
  if (url.origin !== new URL(base).origin) throw new Error(`the comment API's next page is on another host (${url.origin}): not following it with the token`);
  return url.href;
}

/** Every comment, page after page. */
async function allComments(a) {
  const comments = [];
  for (let url = a.list, pages = 0; url !== undefined; pages++) {
    if (pages >= 1000) throw new Error("more than 1000 pages of comments: stopping");
    const { json, link } = await request("GET", url, a.headers);
    if (!Array.isArray(json)) throw new Error(`GET ${url.replace(/\?.*/, "")}: not a list of comments`);
    comments.push(...json);
    url = nextPage(link, a.base);
  }
  return comments;
}

/** Who the token writes as. */
async function tokenUser(a) {
  if (env.GATESYNC_COMMENT_AUTHOR) return env.GATESYNC_COMMENT_AUTHOR;
  try {
    const { json } = await request("GET", `${a.base}/user`, a.headers);
    const name = json.login ?? json.username;
    if (typeof name !== "string" || name === "") throw new Error(`GET ${a.base}/user: no login in the answer`);
    return name;
  } catch (err) {
    const fallback = a.tokenUserFallback(err.status);
    if (fallback !== undefined) return fallback;
    throw new Error(`cannot tell which user the token writes as (${err.message}); set GATESYNC_COMMENT_AUTHOR to its login`);
  }
}

async function main() {
  if (!(platform in api) || !file) throw new Error("usage: post-comment.mjs github|gitlab FILE");
  const a = api[platform]();
  const body = `${marker}\n${readFileSync(file, "utf8")}`;
  if (dryRun) {
    await send("POST", a.create, a.headers, { body });
    process.stdout.write("posted the gatesync comment (dry run)\n");
    return;
  }
  const me = await tokenUser(a);
  const comments = await allComments(a);
  const mine = comments.find((c) => a.authorOf(c) === me && typeof c.body === "string" && c.body.startsWith(marker));
  if (mine === undefined) await send("POST", a.create, a.headers, { body });
  else await send(a.updateMethod, a.update(mine.id), a.headers, { body });
  process.stdout.write(`${mine === undefined ? "posted" : "updated"} the gatesync comment\n`);
}

main().catch((err) => {
  process.stderr.write(`post-comment: ${err.message}\n`);
  process.exitCode = 1;
});
