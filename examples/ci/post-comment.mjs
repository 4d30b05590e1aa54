#!/usr/bin/env node
// Posts a file as ONE comment on the merge request, updating it on later pipelines (no new
// comment per run). Node >= 20, no dependencies. Usage: node post-comment.mjs github|gitlab FILE
//   github: GITHUB_API_URL, GITHUB_REPOSITORY, GATESYNC_PR_NUMBER, GITHUB_TOKEN
//   gitlab: CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID, GITLAB_API_TOKEN
// GATESYNC_COMMENT_DRY_RUN=1 prints what it would send instead of sending it.
/* global fetch */
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
    list: `${need("GITHUB_API_URL")}/repos/${need("GITHUB_REPOSITORY")}/issues/${need("GATESYNC_PR_NUMBER")}/comments?per_page=100`,
    create: `${env.GITHUB_API_URL}/repos/${env.GITHUB_REPOSITORY}/issues/${env.GATESYNC_PR_NUMBER}/comments`,
    update: (id) => `${env.GITHUB_API_URL}/repos/${env.GITHUB_REPOSITORY}/issues/comments/${id}`,
    updateMethod: "PATCH",
    headers: { authorization: `Bearer ${need("GITHUB_TOKEN")}`, accept: "application/vnd.github+json" },
  }),
  gitlab: () => ({
    list: `${need("CI_API_V4_URL")}/projects/${need("CI_PROJECT_ID")}/merge_requests/${need("CI_MERGE_REQUEST_IID")}/notes?per_page=100&sort=asc`,
    create: `${env.CI_API_V4_URL}/projects/${env.CI_PROJECT_ID}/merge_requests/${env.CI_MERGE_REQUEST_IID}/notes`,
    update: (id) => `${env.CI_API_V4_URL}/projects/${env.CI_PROJECT_ID}/merge_requests/${env.CI_MERGE_REQUEST_IID}/notes/${id}`,
    updateMethod: "PUT",
    headers: { "private-token": need("GITLAB_API_TOKEN") },
  }),
};

async function send(method, url, headers, body) {
  if (env.GATESYNC_COMMENT_DRY_RUN === "1") {
    process.stdout.write(`${method} ${url}\n${body === undefined ? "" : `${JSON.stringify(body)}\n`}`);
    return method === "GET" ? [] : {};
  }
  const res = await fetch(url, { method, headers: { ...headers, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${url.replace(/\?.*/, "")}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return res.json();
}

async function main() {
  if (!(platform in api) || !file) throw new Error("usage: post-comment.mjs github|gitlab FILE");
  const a = api[platform]();
  const body = `${marker}\n${readFileSync(file, "utf8")}`;
  const comments = await send("GET", a.list, a.headers);
  const mine = comments.find((c) => typeof c.body === "string" && c.body.startsWith(marker));
  if (mine === undefined) await send("POST", a.create, a.headers, { body });
  else await send(a.updateMethod, a.update(mine.id), a.headers, { body });
  process.stdout.write(`${mine === undefined ? "posted" : "updated"} the gatesync comment\n`);
}

main().catch((err) => {
  process.stderr.write(`post-comment: ${err.message}\n`);
  process.exitCode = 1;
});
