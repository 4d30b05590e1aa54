/**
 * The client's own timeline of its HTTP calls: an undici interceptor noting when each request
 * was handed to the dispatcher and when its answer arrived, with the status and Retry-After.
 * Lets a test check what the client did, free of the delays between client and server.
 */
import type { Dispatcher } from "undici";

export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  /** performance.now() when the request was dispatched. */
  readonly sentAt: number;
  /** performance.now() when the answer's headers arrived; undefined without an answer. */
  answeredAt?: number;
  status?: number;
  retryAfter?: string;
}

export function recordCalls(dispatcher: Dispatcher): { readonly dispatcher: Dispatcher; readonly calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
    const call: RecordedCall = { method: opts.method, path: opts.path, sentAt: performance.now() };
    calls.push(call);
    const note = (status: number, retryAfter: string | undefined): void => {
      if (call.answeredAt !== undefined) return;
      call.answeredAt = performance.now();
      call.status = status;
      if (retryAfter !== undefined) call.retryAfter = retryAfter;
    };
    const wrapped = new Proxy(handler, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        const fn = value as (...args: unknown[]) => unknown;
        if (prop === "onResponseStart") {
          return (controller: unknown, status: number, headers: Record<string, string | string[] | undefined>, ...rest: unknown[]) => {
            const ra = headers["retry-after"];
            note(status, Array.isArray(ra) ? ra[0] : ra);
            return fn.call(target, controller, status, headers, ...rest);
          };
        }
        if (prop === "onHeaders") {
          return (status: number, raw: Buffer[], ...rest: unknown[]) => {
            let ra: string | undefined;
            for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toString().toLowerCase() === "retry-after") ra = raw[i + 1]!.toString();
            note(status, ra);
            return fn.call(target, status, raw, ...rest);
          };
        }
        return fn.bind(target);
      },
    });
    return dispatch(opts, wrapped);
  };
  return { dispatcher: dispatcher.compose(interceptor), calls };
}
