/**
 * The reference's sentences that no row quotes because they state no behaviour a request could
 * show — each with why; any other sentence no row quotes fails the contract test.
 */
import type { Descriptive } from "./table.js";

const intro = "How the management interfaces behave where the interface document is silent";

/** Sentences of the reference that state no behaviour a request could show, and why. */
export const descriptive: Descriptive[] = [
  { section: intro, quote: "is the contract.", why: "names the contract" },
  { section: intro, quote: 'Where it says "not shown", the interfaces behave as below', why: "introduces the document" },
  { section: intro, quote: "The sandbox must answer the same way", why: "states the purpose every row serves" },
  { section: intro, quote: "Operation numbers are those of part 4 of the contract.", why: "a convention of the document" },
  {
    section: "1. PATCH `/gw/apis/oas/{apiID}`",
    quote: "(the handler's own `Must specify an apiID to patch` is unreachable)",
    why: "says which answer never comes; the 405 row shows the one that does",
  },
  {
    section: "2. PUT `/gw/oauth/clients/{apiID}/{keyName}`",
    quote: "Send the whole object every time.",
    why: "advice to clients, following from the wholesale replacement the row before it shows",
  },
  {
    section: "4. POST `{base_url}/{listen_path}/gw/batch`",
    quote: "A client that meets that should try the trailing-slash form before giving up on batching.",
    why: "advice to clients: gatesync's batch client (src/apply) sends the trailing-slash form",
  },
  {
    section: "7. POST `/gw/org/keys/{keyID}`",
    quote: "**The key id is the organisation's id.**",
    why: "how production reads org keys: the sandbox stores the session under the path's id (row) but does not apply organisation limits to traffic (docs/user/sandbox.md); gatesync's validate refuses a keyId that differs from org_id (test/conformance/org-keys.test.ts)",
  },
  {
    section: "7. POST `/gw/org/keys/{keyID}`",
    quote: "the gateway finds an organisation's limits by looking up the session whose key is the organisation's id.",
    why: "organisation limits on traffic are not modelled by the sandbox (docs/user/sandbox.md)",
  },
  {
    section: "7. POST `/gw/org/keys/{keyID}`",
    quote: "A key written as `org-acme` with `org_id: acme` limits nothing: no API of organisation `acme` ever reads it.",
    why: "organisation limits on traffic are not modelled by the sandbox (docs/user/sandbox.md); gatesync refuses such a key at validate",
  },
  {
    section: "3. PUT `/oauth-providers/{provider_id}/client-types/{client_type_id}`",
    quote: "Updating a client type does not change credentials already issued.",
    why: "the sandbox issues no client credentials: there is nothing a request could observe (docs/user/sandbox.md)",
  },
];
