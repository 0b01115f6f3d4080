// A min-heap of keys ordered by due time, with O(log n) reschedule and removal by key.

type Entry<K> = { readonly key: K; due: number; readonly seq: number; index: number };

export type DueItem<K> = { readonly key: K; readonly due: number };

export class DueHeap<K> {
  readonly #heap: Entry<K>[] = [];
  readonly #byKey = new Map<K, Entry<K>>();
  // Ties on due time go to the key scheduled first, so equal delays come out FIFO.
  #seq = 0;

  get size(): number {
    return this.#heap.length;
  }

  has(key: K): boolean {
    return this.#byKey.has(key);
  }

  /** The key's due time, or undefined if it is not in the heap. */
  dueOf(key: K): number | undefined {
    return this.#byKey.get(key)?.due;
  }

  /** Adds the key, or moves it to the new due time if present (earlier or later). */
  set(key: K, due: number): void {
    const existing = this.#byKey.get(key);
    if (existing) {
      existing.due = due;
      this.#fix(existing.index);
      return;
    }
    const entry: Entry<K> = { key, due, seq: this.#seq++, index: this.#heap.length };
    this.#heap.push(entry);
    this.#byKey.set(key, entry);
    this.#up(entry.index);
  }

  delete(key: K): boolean {
    const entry = this.#byKey.get(key);
    if (!entry) return false;
    this.#removeAt(entry.index);
    return true;
  }

  peek(): DueItem<K> | undefined {
    const top = this.#heap[0];
    return top && { key: top.key, due: top.due };
  }

  pop(): DueItem<K> | undefined {
    const top = this.peek();
    if (top) this.#removeAt(0);
    return top;
  }

  clear(): void {
    this.#heap.length = 0;
    this.#byKey.clear();
  }

  #removeAt(index: number): void {
    const entry = this.#entry(index);
    const last = this.#heap.pop() as Entry<K>;
    this.#byKey.delete(entry.key);
    if (last !== entry) {
      this.#place(last, index);
      this.#fix(index);
    }
  }

  #fix(index: number): void {
    if (!this.#up(index)) this.#down(index);
  }

  /** Returns whether the entry moved. */
  #up(index: number): boolean {
    const entry = this.#entry(index);
    let i = index;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = this.#entry(parentIndex);
      if (!this.#less(entry, parent)) break;
      this.#place(parent, i);
      i = parentIndex;
    }
    this.#place(entry, i);
    return i !== index;
  }

  #down(index: number): void {
    const entry = this.#entry(index);
    const n = this.#heap.length;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && this.#less(this.#entry(right), this.#entry(left)) ? right : left;
      const childEntry = this.#entry(child);
      if (!this.#less(childEntry, entry)) break;
      this.#place(childEntry, i);
      i = child;
    }
    this.#place(entry, i);
  }

  #less(a: Entry<K>, b: Entry<K>): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  #place(entry: Entry<K>, index: number): void {
    this.#heap[index] = entry;
    entry.index = index;
  }

  #entry(index: number): Entry<K> {
    return this.#heap[index] as Entry<K>;
  }
}
