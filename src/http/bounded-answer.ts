/**
 * The one bounded reader of HTTP bodies: the answers the apply's calls and the CLI's calls to a
 * daemon read, and the requests the daemon's server and the sandbox read (http-io.ts readBody).
 * A body larger than the bound is never held. A length the server declares past the
 * bound refuses before reading; otherwise reading stops at the first byte past it.
 */

/** An answer past the bound: reading stopped, the body destroyed. */
export class AnswerTooLarge extends Error {}

/** A response body: its bytes, and a way to stop it. */
export type AnswerBody = AsyncIterable<unknown> & { destroy(): unknown };

/**
 * The bytes of `body`, at most `limit`: `declared` (a content-length header) past the bound refuses
 * before reading, else reading stops at the first byte past it. `tooLarge` is the caller's error
 * (a server answers 413; a client says the answer was dropped); `stop` ends the stream when given.
 */
export async function readBoundedBytes(
  body: AsyncIterable<unknown>,
  limit: number,
  declared: string | string[] | undefined,
  tooLarge: () => Error,
  stop?: () => unknown,
): Promise<Buffer> {
  if (Number(Array.isArray(declared) ? declared[0] : (declared ?? 0)) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      stop?.();
      throw tooLarge();
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** An answer's body as text, at most `limit` bytes; `declared` is the content-length header when the caller checks it first. */
export async function readBoundedAnswer(body: AnswerBody, limit: number, declared?: string | string[]): Promise<string> {
  const bytes = await readBoundedBytes(
    body,
    limit,
    declared,
    () => new AnswerTooLarge(),
    () => body.destroy(),
  );
  return bytes.toString("utf8");
}
