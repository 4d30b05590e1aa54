/**
 * Work on one key at a time in this process, in the order it was asked for: a failed turn lets the
 * next one run, and a key nobody waits on is forgotten (the map holds only keys in use).
 */
export class KeyedTurns {
  private readonly turns = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const mine = (this.turns.get(key) ?? Promise.resolve()).then(work, work);
    const settled = mine.catch(() => undefined);
    this.turns.set(key, settled);
    void settled.then(() => {
      if (this.turns.get(key) === settled) this.turns.delete(key);
    });
    return mine;
  }
}
