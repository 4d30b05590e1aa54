/**
 * A loopback TCP proxy in front of a server (PostgreSQL, an HTTP target) that can be cut the way
 * a dropped route or a firewall cuts a connection: `cut()` stops forwarding in both directions
 * without closing anything — bytes are read and dropped, new connections are accepted and never
 * answered — so each end sees a silent peer, not a reset. `heal()` forwards again on the
 * connections opened from then on (the ones open during the cut stay silent, as after a real
 * partition their streams are out of step).
 */
import { createServer, connect } from "node:net";
import type { AddressInfo, Socket } from "node:net";

export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  cut(): void;
  heal(): void;
  /** Connections accepted so far. */
  readonly accepted: () => number;
  stop(): Promise<void>;
}

export async function tcpProxy(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
  let cut = false;
  let accepted = 0;
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => undefined);
  };
  const server = createServer((client) => {
    accepted++;
    track(client);
    // a connection opened during a cut is black-holed for good
    if (cut) return void client.on("data", () => undefined);
    let silent = false;
    const upstream = connect(target.port, target.host);
    track(upstream);
    const forward = (from: Socket, to: Socket): void => {
      from.on("data", (chunk: Buffer) => {
        if (cut) silent = true;
        if (!silent) to.write(chunk);
      });
      from.on("end", () => {
        if (!silent && !cut) to.end();
      });
    };
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    through: (url) => {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut: () => {
      cut = true;
    },
    heal: () => {
      cut = false;
    },
    accepted: () => accepted,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
