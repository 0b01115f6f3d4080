// client-go's workqueue metrics for our WorkQueue, with its semantics (util/workqueue/metrics.go): depth counts
// dirty keys (queued, or re-added while processing) and falls when one is handed out; adds counts keys that
// became dirty; queue duration runs from the first add to the hand-out, work duration from hand-out to done;
// retries counts every addAfter; the two unfinished-work gauges are computed over the keys processing now.
import type { Counter, Gauge, Histogram } from "prom-client";
import type { QueueObserver } from "./work-queue.js";

/** The family's series for one queue (the `name` label already applied). */
export type QueueSeries = {
  readonly depth: Gauge.Internal<string>;
  readonly adds: Counter.Internal;
  readonly queueDuration: Histogram.Internal<string>;
  readonly workDuration: Histogram.Internal<string>;
  readonly retries: Counter.Internal;
};

export class QueueMetrics implements QueueObserver {
  readonly #series: QueueSeries;
  readonly #now: () => number;
  /** Key → when it was first added since it was last handed out (ms). */
  readonly #addedAt = new Map<string, number>();
  /** Key → when its processing started (ms). */
  readonly #startedAt = new Map<string, number>();

  constructor(series: QueueSeries, now: () => number = () => performance.now()) {
    this.#series = series;
    this.#now = now;
  }

  added(key: string): void {
    this.#series.adds.inc();
    this.#series.depth.inc();
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, this.#now());
  }

  taken(key: string): void {
    const now = this.#now();
    this.#series.depth.dec();
    this.#startedAt.set(key, now);
    const addedAt = this.#addedAt.get(key);
    if (addedAt === undefined) return;
    this.#series.queueDuration.observe((now - addedAt) / 1000);
    this.#addedAt.delete(key);
  }

  finished(key: string): void {
    const startedAt = this.#startedAt.get(key);
    if (startedAt === undefined) return;
    this.#series.workDuration.observe((this.#now() - startedAt) / 1000);
    this.#startedAt.delete(key);
  }

  retried(): void {
    this.#series.retries.inc();
  }

  /** Seconds of work in progress, summed and the longest (workqueue_unfinished_work_seconds and _longest_...). */
  unfinished(): { readonly totalSeconds: number; readonly longestSeconds: number } {
    const now = this.#now();
    let totalSeconds = 0;
    let longestSeconds = 0;
    for (const startedAt of this.#startedAt.values()) {
      const seconds = (now - startedAt) / 1000;
      totalSeconds += seconds;
      longestSeconds = Math.max(longestSeconds, seconds);
    }
    return { totalSeconds, longestSeconds };
  }
}
