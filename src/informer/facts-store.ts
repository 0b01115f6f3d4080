// A cache of compact facts by key, reporting the change each write made (for enqueueing).

export type StoreChange<T> = {
  readonly key: string;
  readonly previous: T | undefined;
  readonly current: T | undefined;
};

export class FactsStore<T> {
  readonly keyOf: (facts: T) => string;
  readonly #same: (a: T, b: T) => boolean;
  #items = new Map<string, T>();

  /** `same` says whether two facts differ in anything a decision reads; equal ones cause no change. */
  constructor(keyOf: (facts: T) => string, same: (a: T, b: T) => boolean) {
    this.keyOf = keyOf;
    this.#same = same;
  }

  get size(): number {
    return this.#items.size;
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  values(): IterableIterator<T> {
    return this.#items.values();
  }

  /**
   * Stores the facts. Returns the change, or undefined when nothing a decision reads changed: the newer
   * facts are stored either way, so an action's resourceVersion precondition is always the latest seen.
   */
  upsert(facts: T): StoreChange<T> | undefined {
    const key = this.keyOf(facts);
    const previous = this.#items.get(key);
    this.#items.set(key, facts);
    if (previous && this.#same(previous, facts)) return undefined;
    return { key, previous, current: facts };
  }

  remove(key: string): StoreChange<T> | undefined {
    const previous = this.#items.get(key);
    if (!previous) return undefined;
    this.#items.delete(key);
    return { key, previous, current: undefined };
  }

  /** Swaps in the result of a full list at once and returns what differs: vanished, new and changed items. */
  replaceAll(listed: Map<string, T>): StoreChange<T>[] {
    const changes: StoreChange<T>[] = [];
    for (const [key, previous] of this.#items) {
      if (!listed.has(key)) changes.push({ key, previous, current: undefined });
    }
    for (const [key, current] of listed) {
      const previous = this.#items.get(key);
      if (!previous || !this.#same(previous, current)) changes.push({ key, previous, current });
    }
    this.#items = listed;
    return changes;
  }
}
