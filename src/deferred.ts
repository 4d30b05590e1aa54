/**
 * Deferred values: what gatesync holds instead of a value it would rather not keep in memory —
 * at 100,000 resources the parsed trees of specs, requests and documents would not fit the
 * pod's 512 MiB — and produces when asked. Producing is `read()`, a method, never a property
 * access: whoever calls it can see that it may parse, read a file again or throw. Which of
 * these an implementation does is said on its class (docs/dev/memory.md lists them all).
 *
 * Nothing is cached: each `read()` produces the value again (a cache would bring the trees
 * back one read at a time), so a reader that needs the value twice keeps it in a local.
 */

/** A value produced on `read()`; may throw (an implementation names the errors, from src/errors.ts). */
export interface Deferred<T> {
  /** Produces the value: parses or reads again as the implementation says; a fresh copy unless it says otherwise. */
  read(): T;
}

/**
 * A value already in memory, behind the same interface: where holding it some other way would
 * not pay (a spec text would not give back, a process that keeps its trees anyway). `read()`
 * gives the same object each time and cannot fail.
 */
export class HeldValue<T> implements Deferred<T> {
  readonly value: T;

  constructor(value: T) {
    this.value = value;
  }

  read(): T {
    return this.value;
  }

  /** Serialised, it is the value. */
  toJSON(): T {
    return this.value;
  }
}

/**
 * Plain JSON data held as its text: a few hundred bytes where its object tree weighs about ten
 * times more in V8. `read()` parses it — a fresh copy each time — and cannot fail: the text
 * was written by `JSON.stringify` of plain data (see `jsonTextOf` in kinds/json-text.ts).
 */
export class JsonText<T> implements Deferred<T> {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  read(): T {
    return JSON.parse(this.text) as T;
  }

  /** Serialised, it is the value (parsed once for the purpose). */
  toJSON(): T {
    return this.read();
  }
}
