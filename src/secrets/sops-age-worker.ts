/**
 * The thread that unwraps SOPS data keys with `age-encryption` (age-unwrap.ts) for a lookup that
 * finds its file's key not unwrapped and holds an identity that is no X25519 one (age-x25519.ts
 * unwraps those on the lookup's thread): secret lookups are synchronous (resolver.ts), so sops-age.ts waits for this
 * thread's answer on a shared flag (Atomics.wait) and takes it from the port at once.
 */
import { workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { unwrapAll } from "./age-unwrap.js";
import type { UnwrapRequest } from "./age-unwrap.js";

const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };

port.on("message", (request: UnwrapRequest) => {
  void unwrapAll(request).then((answer) => {
    port.postMessage(answer);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
});
