import type { IncomingHttpHeaders } from "node:http";
import type { OperationName } from "../contract/operations.js";
import type { Reply } from "../http/http-io.js";
import type { OpenApiDocumentChecker } from "./interfaces/openapi-check.js";
import type { SandboxStore } from "./store.js";

/** Credentials of the four interfaces (sandbox-only values). */
export interface SandboxCredentials {
  readonly gatewayKey: string;
  readonly portalKey: string;
  readonly dashboardToken: string;
  readonly llmKey: string;
}

/** One request, as a handler sees it. */
export interface HandlerContext {
  readonly method: string;
  readonly url: URL;
  /** Path below the interface's prefix. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body, read at most once, bounded (throws BodyTooLarge). */
  readonly body: () => Promise<Buffer>;
}

/** What every handler may use. */
export interface SandboxDeps {
  readonly store: SandboxStore;
  readonly credentials: SandboxCredentials;
  readonly openapi: OpenApiDocumentChecker;
  readonly maxDepth: number;
}

export interface Handled {
  readonly operation: OperationName | "traffic" | "unknown";
  readonly reply: Reply;
}
