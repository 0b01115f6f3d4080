// Entries by key, counted on a gauge under labels each entry carries: every set and delete moves the gauge with the
// map, so the gauge is always the map's tally (broken pods by rule, held pods by reason). Arrivals (a set the
// owner calls new: a newly broken pod, a new hold) also go on a counter under the same labels.
import type { LabelledCounter, LabelledGauge } from "./metrics.js";

export class GaugedMap<E, L extends Record<string, string>> {
  readonly #entries = new Map<string, E>();
  readonly #gauge: LabelledGauge<L>;
  readonly #arrivals: LabelledCounter<L>;
  readonly #labelsOf: (entry: E) => L;

  constructor(gauge: LabelledGauge<L>, arrivals: LabelledCounter<L>, labelsOf: (entry: E) => L) {
    this.#gauge = gauge;
    this.#arrivals = arrivals;
    this.#labelsOf = labelsOf;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): E | undefined {
    return this.#entries.get(key);
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  keys(): MapIterator<string> {
    return this.#entries.keys();
  }

  entries(): MapIterator<[string, E]> {
    return this.#entries.entries();
  }

  /** Replaces whatever was under the key; `arrival` counts it as new on the arrivals counter. */
  set(key: string, entry: E, { arrival }: { arrival: boolean }): void {
    this.delete(key);
    this.#entries.set(key, entry);
    this.#gauge.inc(this.#labelsOf(entry));
    if (arrival) this.#arrivals.inc(this.#labelsOf(entry));
  }

  /** Returns what was under the key. */
  delete(key: string): E | undefined {
    const existing = this.#entries.get(key);
    if (existing === undefined) return undefined;
    this.#entries.delete(key);
    this.#gauge.dec(this.#labelsOf(existing));
    return existing;
  }
}
