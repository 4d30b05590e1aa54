/**
 * A hostile management server: it answers every call with an error that echoes the whole
 * request (URL, headers, body) — 400 and 500 in turn, as JSON and as plain text — and answers
 * the batch route with 200 and one echoing 4xx/5xx item per sub-request. Counts what it got.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface EchoServer {
  readonly url: string;
  readonly requests: () => number;
  stop(): Promise<void>;
}

export async function startEchoServer(): Promise<EchoServer> {
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const n = count++;
      const body = Buffer.concat(chunks).toString();
      const echo = { method: req.method, url: req.url, headers: req.headers, body };
      if (/\/gw\/batch\/?$/.test(new URL(req.url ?? "/", "http://x").pathname)) {
        const requests = (JSON.parse(body || "{}") as { requests?: Array<Record<string, unknown>> }).requests ?? [];
        const items = requests.map((r, i) => ({
          relative_url: r.relative_url,
          code: i % 2 === 0 ? 400 : 500,
          headers: {},
          body: JSON.stringify({ error: "refused", echo: r, outer: echo.headers }),
        }));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(items));
        return;
      }
      const status = n % 2 === 0 ? 400 : 500;
      if (n % 3 === 0) {
        res.writeHead(status, { "content-type": "text/plain" });
        res.end(`refused ${req.method} ${req.url} ${JSON.stringify(req.headers)} ${body}`);
      } else {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "refused", echo }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => count,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
