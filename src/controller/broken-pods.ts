// Which pods are broken right now (by key), since when, and under which rule: feeds the gauge,
// the detection counter, repair latency and the periodic resync.
import { GaugedMap } from "../observe/gauged-map.js";
import type { LabelledCounter, LabelledGauge } from "../observe/metrics.js";

export type BrokenEntry = { readonly uid: string; readonly rule: string; readonly sinceMs: number };

export class BrokenPods {
  readonly #entries: GaugedMap<BrokenEntry, { rule: string }>;

  constructor(gauge: LabelledGauge<{ rule: string }>, detections: LabelledCounter<{ rule: string }>) {
    this.#entries = new GaugedMap(gauge, detections, (entry) => ({ rule: entry.rule }));
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  keys(): IterableIterator<string> {
    return this.#entries.keys();
  }

  /** Records the pod as broken; a new UID under the same name (a replacement) counts as a new detection. */
  markBroken(key: string, uid: string, rule: string, nowMs: number): BrokenEntry {
    const existing = this.#entries.get(key);
    if (existing && existing.uid === uid && existing.rule === rule) return existing;
    const entry = { uid, rule, sinceMs: existing?.uid === uid ? existing.sinceMs : nowMs };
    this.#entries.set(key, entry, { arrival: existing?.uid !== uid });
    return entry;
  }

  /** The pod is healthy, going away, or gone: returns what was known about it. */
  clear(key: string): BrokenEntry | undefined {
    return this.#entries.delete(key);
  }
}
