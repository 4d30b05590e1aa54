/**
 * An OTLP/HTTP receiver on loopback, as a collector: it keeps every export's body (OTLP as JSON,
 * what @opentelemetry/exporter-trace-otlp-http sends) and reads the spans out of them. `answer`
 * says what it does with each export: 200, 500, or never answer (a collector that hangs).
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  /** Nanoseconds since the epoch (OTLP/JSON writes them as strings). */
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: Record<string, unknown>;
  readonly events: readonly ExportedEvent[];
}

export interface ExportedEvent {
  readonly name: string;
  readonly timeUnixNano: string;
  readonly attributes: Record<string, unknown>;
}

export interface Receiver {
  readonly url: string;
  /** Every request body received, as text. */
  readonly bodies: string[];
  /** Every request's headers. */
  readonly headers: IncomingHttpHeaders[];
  spans(): ExportedSpan[];
  resource(): Record<string, unknown>;
  /** The resource of the export at `index`. */
  resourceOf(index: number): Record<string, unknown>;
  stop(): Promise<void>;
}

type AttributeList = { key: string; value: Record<string, unknown> }[];
/** An attribute's value as OTLP/JSON writes it (`{ stringValue }`, `{ intValue }` as a string …), as a plain value. */
function plain(value: Record<string, unknown>): unknown {
  const v: unknown = Object.values(value)[0];
  return typeof v === "string" && "intValue" in value ? Number(v) : v;
}
const attributesOf = (list: AttributeList | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((a) => [a.key, plain(a.value)]));

type OtlpEvent = Omit<ExportedEvent, "attributes"> & { attributes?: AttributeList };
type OtlpSpan = Omit<ExportedSpan, "attributes" | "events"> & { attributes: AttributeList; events?: OtlpEvent[] };
interface OtlpBody {
  resourceSpans: { resource: { attributes: AttributeList }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

/** A span as sent, its attributes and its events' attributes as plain values. */
const readSpan = (sp: OtlpSpan): ExportedSpan => ({
  ...sp,
  attributes: attributesOf(sp.attributes),
  events: (sp.events ?? []).map((e) => ({ ...e, timeUnixNano: String(e.timeUnixNano), attributes: attributesOf(e.attributes) })),
});

/** An OTLP/HTTP receiver on loopback: `answer` says what it does with each export (ok, 500, or never answer). */
export async function startReceiver(answer: "ok" | "500" | "hang"): Promise<Receiver> {
  const bodies: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (b: Buffer) => (text += b.toString()));
    req.on("end", () => {
      bodies.push(text);
      headers.push(req.headers);
      if (answer === "hang") return;
      res.writeHead(answer === "ok" ? 200 : 500, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const parsed = (): OtlpBody[] => bodies.map((b) => JSON.parse(b) as OtlpBody);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    headers,
    spans: () => parsed().flatMap((b) => b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map(readSpan)))),
    resource: () => attributesOf(parsed()[0]?.resourceSpans[0]?.resource.attributes),
    resourceOf: (index) => attributesOf(parsed()[index]?.resourceSpans[0]?.resource.attributes),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
