import { createServer } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  stop(): Promise<void>;
}

/**
 * A local HTTP server that records every request. `?delay=MS` answers after a delay;
 * `?status=N` answers with that status. Answers echo what was received, as JSON.
 */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const entry = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString() };
      received.push(entry);
      const q = new URL(req.url ?? "/", "http://x").searchParams;
      const answer = (): void => {
        res.writeHead(Number(q.get("status") ?? 200), { "content-type": "application/json", "x-upstream": "receiver" });
        res.end(JSON.stringify({ method: entry.method, url: entry.url, body: entry.body }));
      };
      const delay = Number(q.get("delay") ?? 0);
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
