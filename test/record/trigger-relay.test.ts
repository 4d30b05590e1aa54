/** The messages replicas exchange on the trigger channel: only this state's, only well-formed ones. */
import { describe, expect, it } from "vitest";
import { PendingAcks, decodeMessage, encodeMessage } from "../../src/record/trigger-relay.js";

describe("trigger relay messages", () => {
  it("reads a trigger and an acknowledgement of its own schema, and nothing else", () => {
    const trigger = encodeMessage({ kind: "trigger", schema: "gs_a", reason: "webhook", nonce: "n1", from: "host:1" });
    expect(decodeMessage(trigger, "gs_a")).toEqual({ kind: "trigger", schema: "gs_a", reason: "webhook", nonce: "n1", from: "host:1" });
    // replicas of another state on the same database share the channel: not theirs
    expect(decodeMessage(trigger, "gs_b")).toBeUndefined();
    expect(decodeMessage(encodeMessage({ kind: "ack", schema: "gs_a", nonce: "n1", from: "host:2" }), "gs_a")).toMatchObject({ kind: "ack", nonce: "n1" });
    for (const bad of [
      undefined,
      "",
      "not json",
      "null",
      '{"kind":"trigger","schema":"gs_a","reason":"apply-everything","nonce":"n","from":"x"}',
      '{"kind":"other","schema":"gs_a","nonce":"n","from":"x"}',
      '{"kind":"ack","schema":"gs_a","from":"x"}',
    ]) {
      expect(decodeMessage(bad, "gs_a"), String(bad)).toBeUndefined();
    }
    expect(trigger.length).toBeLessThan(8000);
  });

  it("resolves a forward with the leader's name once acknowledged, or undefined after the timeout", async () => {
    const acks = new PendingAcks();
    const a = acks.expect(1_000);
    const b = acks.expect(20);
    acks.acknowledge(a.nonce, "leader:7");
    acks.acknowledge("someone-else's", "leader:7");
    expect(await a.acked).toBe("leader:7");
    expect(await b.acked).toBeUndefined();
  });
});
