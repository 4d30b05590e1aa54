/** What the gateway's contract rows share: their sections, the requests they send, the bodies they write. */
import { expect } from "vitest";
import type { Row } from "./table.js";

export const G = "Gateway (operations 1, 2, 4, 7: everything under `{base_url}/gw/`)";
export const OP1 = "1. PATCH `/gw/apis/oas/{apiID}`";
export const OP2 = "2. PUT `/gw/oauth/clients/{apiID}/{keyName}`";
export const OP7 = "7. POST `/gw/org/keys/{keyID}`";

export const oas = { openapi: "3.1.0", info: { title: "Pets", version: "2" }, servers: [{ url: "http://pets.internal" }], paths: {} };
export const bare = { openapi: "3.1.0", info: { title: "Bare", version: "1" }, paths: {} };
export const gwError = (message: string): object => ({ status: "error", message });
export const patch = (id: string, body: unknown, query = ""): Row["send"] => ({ method: "PATCH", path: `/gw/apis/oas/${id}${query}`, body });
export const client = (api: string, id: string, body: unknown): Row["send"] => ({ method: "PUT", path: `/gw/oauth/clients/${api}/${id}`, body });
export const orgKey = (id: string, body: unknown, query = "", method = "POST"): Row["send"] => ({ method, path: `/gw/org/keys/${id}${query}`, body });
export const mobile = "petstore-v1\0petstore-mobile-app";
/** An extension the published schema accepts, with the given id (or none). */
export const complete = (id: string | undefined): object => ({
  info: { ...(id === undefined ? {} : { id }), name: "Pets", state: { active: true } },
  upstream: { url: "http://pets.internal" },
  server: { listenPath: { value: "/pets/" } },
});
export const refused =
  (pattern: RegExp): NonNullable<Row["after"]> =>
  (_w, a) =>
    expect((a.body as { message: string }).message).toMatch(pattern);
export const op = (responses = { "200": { description: "ok" } }): object => ({ responses });
export const semantic = (more: object): object => ({ ...oas, ...more });
