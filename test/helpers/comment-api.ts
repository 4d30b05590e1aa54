/** A forge's comment API on loopback: what examples/ci/post-comment.mjs, the action and the component talk to. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Comment {
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
export async function fakeCommentApi(platform: "github" | "gitlab", tokens: Record<string, string>, userStatus = 200) {
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
