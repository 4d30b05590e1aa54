/**
 * What both LISTEN/NOTIFY channels (the trigger relay of replicas sharing one state, and a
 * fleet's messages) accept before looking at a message's kind: a JSON object of their schema,
 * naming its sender. Anything else on the channel — another schema's, a malformed payload — is
 * not theirs and is ignored, never an error.
 */
export function channelMessage(payload: string | undefined, schema: string): Readonly<Partial<Record<string, unknown>>> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(payload ?? "");
  } catch {
    return undefined;
  }
  const m = v as Partial<Record<string, unknown>> | null;
  if (m === null || typeof m !== "object" || Array.isArray(m) || m.schema !== schema || typeof m.from !== "string") return undefined;
  return m;
}
