/**
 * A proxy in front of the sandbox that misbehaves on the requests a rule matches, the way real
 * servers, proxies and firewalls do: it answers for the server (a 429 with a long Retry-After,
 * a 404), or forwards the request — so the sandbox really processes it — and then mangles the
 * answer (drips its body one byte at a time, pads it to hundreds of megabytes, replaces it
 * with an HTML page). Everything else passes through unchanged. It logs what it saw and how
 * many answer bytes it managed to write.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";

export type Misbehaviour =
  | { readonly kind: "answer"; readonly status: number; readonly headers?: Record<string, string>; readonly body: string }
  | { readonly kind: "drip"; readonly everyMs: number }
  | { readonly kind: "huge"; readonly bytes: number }
  /** The answer's JSON object with an `echo` member of `bytes` characters: a large 2xx that parses. */
  | { readonly kind: "bloat"; readonly bytes: number }
  | { readonly kind: "garbage" }
  /** Forward to another path (a route the sandbox knows under another form). */
  | { readonly kind: "rewrite"; readonly path: string };

export interface Rule {
  readonly method?: string;
  readonly path: RegExp;
  /** Misbehave on the first `times` matching requests only (default: all). */
  readonly times?: number;
  readonly then: Misbehaviour;
}

export interface ProxyCall {
  readonly method: string;
  readonly path: string;
  readonly misbehaved: boolean;
}

export interface MisbehavingProxy {
  readonly url: string;
  readonly calls: ProxyCall[];
  /** Answer bytes written for mangled answers (all of them, however many the client read). */
  readonly written: { bytes: number };
  stop(): Promise<void>;
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Writes `bytes` of spaces after `head`, minding backpressure, until done or the client leaves. */
async function writeHuge(res: ServerResponse, head: Buffer, bytes: number, written: { bytes: number }): Promise<void> {
  const block = Buffer.alloc(64 * 1024, " ");
  res.write(head);
  written.bytes += head.length;
  for (let sent = head.length; sent < bytes && !res.destroyed; sent += block.length) {
    written.bytes += block.length;
    if (!res.write(block))
      await new Promise<void>((resolve) => {
        res.once("drain", resolve);
        res.once("close", resolve);
      });
  }
  res.end();
}

async function drip(res: ServerResponse, body: Buffer, everyMs: number, written: { bytes: number }): Promise<void> {
  for (let i = 0; i < body.length && !res.destroyed; i++) {
    res.write(body.subarray(i, i + 1));
    written.bytes++;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  res.end();
}

export async function misbehavingProxy(target: string, rules: readonly Rule[]): Promise<MisbehavingProxy> {
  const calls: ProxyCall[] = [];
  const written = { bytes: 0 };
  const used = new Map<Rule, number>();
  const matching = (method: string, path: string): Rule | undefined => {
    const rule = rules.find(
      (r) => (r.method === undefined || r.method === method) && r.path.test(path) && (r.times === undefined || (used.get(r) ?? 0) < r.times),
    );
    if (rule !== undefined) used.set(rule, (used.get(rule) ?? 0) + 1);
    return rule;
  };
  const agent = new Agent({ keepAliveTimeout: 1000 });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const rule = matching(method, path);
    calls.push({ method, path, misbehaved: rule !== undefined });
    const body = await readAll(req);
    if (rule?.then.kind === "answer") {
      res.writeHead(rule.then.status, { "content-type": "application/json", ...rule.then.headers });
      res.end(rule.then.body);
      return;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k))) as Record<
      string,
      string
    >;
    const upstream = await request(`${target}${rule?.then.kind === "rewrite" ? rule.then.path : path}`, {
      method,
      headers,
      body: body.length > 0 ? body : null,
      dispatcher: agent,
    });
    const answer = Buffer.from(await upstream.body.arrayBuffer());
    const type = String(upstream.headers["content-type"] ?? "application/json");
    switch (rule?.then.kind) {
      case "drip":
        res.writeHead(upstream.statusCode, { "content-type": type, "content-length": String(answer.length) });
        return drip(res, answer, rule.then.everyMs, written);
      case "huge":
        res.writeHead(upstream.statusCode, { "content-type": type });
        return writeHuge(res, answer, rule.then.bytes, written);
      case "bloat": {
        const bloated = Buffer.from(JSON.stringify({ ...(JSON.parse(answer.toString("utf8")) as object), echo: "x".repeat(rule.then.bytes) }));
        written.bytes += bloated.length;
        res.writeHead(upstream.statusCode, { "content-type": "application/json", "content-length": String(bloated.length) });
        res.end(bloated);
        return;
      }
      case "garbage":
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html><body>Service temporarily rewritten by a proxy</body></html>");
        return;
      default:
        res.writeHead(upstream.statusCode, { "content-type": type });
        res.end(answer);
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    written,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}
