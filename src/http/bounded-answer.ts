/**
 * The one reader of an HTTP answer with a byte bound (the apply's calls, the CLI's calls to a
 * daemon): a body larger than the bound is never held. A length the server declares past the
 * bound refuses before reading; otherwise reading stops at the first byte past it.
 */

/** An answer past the bound: reading stopped, the body destroyed. */
export class AnswerTooLarge extends Error {}

/** A response body: its bytes, and a way to stop it. */
export type AnswerBody = AsyncIterable<unknown> & { destroy(): unknown };

/** The body as text, at most `limit` bytes; `declared` is the content-length header when the caller checks it first. */
export async function readBoundedAnswer(body: AnswerBody, limit: number, declared?: string | string[]): Promise<string> {
  if (Number(Array.isArray(declared) ? declared[0] : (declared ?? 0)) > limit) throw new AnswerTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      body.destroy();
      throw new AnswerTooLarge();
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString("utf8");
}
