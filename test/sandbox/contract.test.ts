/**
 * The contract table: one row per behaviour the interface reference documents, each naming its
 * section and quoting its words, run against the sandbox over real HTTP. Every sentence of the
 * reference is quoted by a row or excused as descriptive: a behaviour without a row fails here.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import type { Receiver } from "../helpers/receiver.js";
import { startReceiver } from "../helpers/receiver.js";
import { exampleFixtures, testCredentials } from "../helpers/sandbox.js";
import { batchRows } from "./contract/batch.rows.js";
import { gatewayRows } from "./contract/gateway.rows.js";
import { descriptive } from "./contract/descriptive.js";
import { otherRows } from "./contract/other.rows.js";
import { portalRows } from "./contract/portal.rows.js";
import type { Row, World } from "./contract/table.js";
import { quotes, referenceSentences, send } from "./contract/table.js";

const rows: Row[] = [...gatewayRows, ...batchRows, ...portalRows, ...otherRows];
const sentences = referenceSentences();

const ordersDoc = {
  openapi: "3.1.0",
  info: { title: "Orders", version: "1" },
  paths: { "/orders/{id}": { get: { responses: { "200": { description: "one", content: { "application/json": { example: { id: "o-1", total: 3 } } } } } } } },
};

let world: World;
let upstream: Receiver;
beforeAll(async () => {
  upstream = await startReceiver();
  const sb = await startSandbox({
    credentials: testCredentials,
    fixtures: await exampleFixtures({
      apis: [
        { id: "echo", listenPath: "/echo/", upstream: upstream.url, batchProcessing: true },
        { id: "keep", listenPath: "/keep/", upstream: upstream.url, strip: false },
        { id: "locked", listenPath: "/locked/", upstream: upstream.url, authentication: true, batchProcessing: true },
        { id: "mocked", listenPath: "/mocked/", upstream: upstream.url, mockResponse: true, batchProcessing: true, document: ordersDoc },
      ],
      keys: [{ key: "locked-key", apis: ["locked"] }],
    }),
  });
  world = { sb, upstream };
});
afterAll(async () => {
  await world.sb.stop();
  await upstream.stop();
});
beforeEach(() => {
  world.sb.inspect.reset();
  world.sb.inspect.setFaults({
    resetRate: 0,
    errorRate: 0,
    unavailableRate: 0,
    lostResponseRate: 0,
    rateLimit: undefined,
    scope: "all",
    interfaces: ["gateway", "portal", "dashboard", "llm"],
  });
  upstream.received.length = 0;
});

describe("the reference, sentence by sentence", () => {
  it("every row quotes its own section", () => {
    const misplaced = rows.filter((r) => !sentences.some((s) => quotes(s, r))).map((r) => `${r.section}: ${r.quote}`);
    expect(misplaced).toEqual([]);
    expect(descriptive.filter((d) => !sentences.some((s) => quotes(s, d)))).toEqual([]);
  });

  it("every sentence has a row, or is descriptive", () => {
    const uncovered = sentences.filter((s) => !rows.some((r) => quotes(s, r)) && !descriptive.some((d) => quotes(s, d)));
    expect(uncovered.map((s) => `${s.section}: ${s.text}`)).toEqual([]);
  });
});

const sections = [...new Set(rows.map((r) => r.section))];
describe.each(sections)("%s", (section) => {
  it.each(rows.filter((r) => r.section === section).map((r) => [`${r.quote}${r.case === undefined ? "" : ` — ${r.case}`}`, r] as const))(
    "%s",
    async (_title, row) => {
      await row.before?.(world);
      for (const step of row.prepare ?? []) {
        if (typeof step === "function") await step(world);
        else await send(world, step).catch(() => undefined);
      }
      const answer = await send(world, row.send);
      expect(answer.status, answer.text.slice(0, 300)).toBe(row.expect.status);
      if ("body" in row.expect) expect(answer.body).toEqual(row.expect.body);
      if (row.expect.match !== undefined) expect(answer.body).toMatchObject(row.expect.match);
      if (row.expect.text !== undefined) expect(answer.text).toBe(row.expect.text);
      for (const [name, value] of Object.entries(row.expect.headers ?? {})) {
        if (typeof value === "string") expect(answer.headers[name]).toBe(value);
        else expect(String(answer.headers[name])).toMatch(value);
      }
      await row.after?.(world, answer);
    },
  );
});
