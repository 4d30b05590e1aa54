/**
 * The thread that unwraps SOPS data keys with `age-encryption` (age-unwrap.ts) for a lookup that
 * finds its file's key not unwrapped and holds an identity that is no X25519 one (age-x25519.ts
 * unwraps those on the lookup's thread): secret lookups are synchronous (resolver.ts), so sops-age.ts waits for this
 * thread's answer on a shared flag (Atomics.wait) and takes it from the port at once. A run's
 * prefetch of many keys sends X25519 identities here too, and awaits the flag (Atomics.waitAsync):
 * the daemon's event loop answers /healthz meanwhile.
 */
import { workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { unwrapAll } from "./age-unwrap.js";
import { unwrapX25519 } from "./age-x25519.js";
import type { UnwrapRequest } from "./age-unwrap.js";

const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };

port.on("message", (request: UnwrapRequest) => {
  const x25519 = unwrapX25519(request);
  void (x25519 === undefined ? unwrapAll(request) : Promise.resolve(x25519)).then((answer) => {
    port.postMessage(answer);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
});
