// Feeds cache changes into the work queue and runs reconciles: bounded concurrency, retries, resync.
import PQueue from "p-queue";
import { detect } from "../detect/detect.js";
import type { Rule } from "../detect/rule.js";
import type { StoreChange } from "../informer/pod-store.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import type { WorkQueue } from "../queue/work-queue.js";
import type { BrokenPods } from "./broken-pods.js";
import type { Reconciler } from "./reconciler.js";

export type ControllerOptions = {
  readonly queue: WorkQueue;
  readonly reconciler: Reconciler;
  readonly broken: BrokenPods;
  readonly rules: readonly Rule[];
  readonly workers: number;
  /** Failed attempts per key before giving up until the next change or resync. */
  readonly maxRetries: number;
  /** 0: off. */
  readonly resyncPeriodMs: number;
  readonly metrics: Metrics;
  readonly logger: Logger;
};

export class Controller {
  readonly #options: ControllerOptions;
  readonly #executor: PQueue;

  constructor(options: ControllerOptions) {
    this.#options = options;
    this.#executor = new PQueue({ concurrency: options.workers });
  }

  /**
   * Called for every cache change. Only pods that look broken now, or were broken before, are queued:
   * the reconcile re-reads the cache anyway, and a 100k-pod initial list should not mean 100k reconciles.
   */
  onChange(change: StoreChange): void {
    const relevant =
      this.#options.broken.has(change.key) ||
      (change.current !== undefined && detect(change.current, this.#options.rules).broken);
    if (relevant) this.#enqueue(change.key);
  }

  /** Re-queues every pod known to be broken, so one missed or failed repair is picked up again. */
  resync(): void {
    for (const key of this.#options.broken.keys()) this.#enqueue(key);
  }

  /** Hands keys to the workers until the queue shuts down, then waits for in-flight reconciles. */
  async run(signal: AbortSignal): Promise<void> {
    const { queue, resyncPeriodMs } = this.#options;
    const resync = resyncPeriodMs > 0 ? setInterval(() => this.resync(), resyncPeriodMs) : undefined;
    signal.addEventListener("abort", () => queue.shutDown(), { once: true });
    try {
      for (;;) {
        // Take a key only when a worker is free, so keys wait in the deduplicating queue, not here.
        await this.#executor.onSizeLessThan(1);
        const key = await queue.get();
        if (key === undefined) break;
        this.#updateDepth();
        void this.#executor.add(() => this.#process(key));
      }
    } finally {
      clearInterval(resync);
    }
    await this.#executor.onIdle();
  }

  async #process(key: string): Promise<void> {
    const { queue, reconciler, metrics, logger, maxRetries } = this.#options;
    const timer = metrics.reconcileDurationSeconds.startTimer();
    try {
      const result = await reconciler.reconcile(key);
      switch (result.kind) {
        case "done":
          queue.forget(key);
          break;
        case "requeue":
          queue.forget(key);
          queue.addAfter(key, result.afterMs);
          break;
        case "retry":
          this.#retry(key, result.notBeforeMs, result.error, maxRetries);
          break;
      }
    } catch (error) {
      // A bug or an unexpected error must not kill the worker: log it and retry like a failed action.
      logger.error("reconcile threw", { key, error: (error as Error).stack ?? String(error) });
      this.#retry(key, 0, (error as Error).message, maxRetries);
    } finally {
      timer();
      queue.done(key);
      this.#updateDepth();
    }
  }

  #retry(key: string, notBeforeMs: number, error: string, maxRetries: number): void {
    const { queue, metrics, logger } = this.#options;
    if (queue.failures(key) >= maxRetries) {
      metrics.retriesExhausted.inc();
      logger.warn("giving up on pod until it changes or the next resync", { key, retries: maxRetries, error });
      queue.forget(key);
      return;
    }
    metrics.queueRetries.inc();
    // Retry-After from the server wins when it asks for a longer pause than our backoff.
    queue.addRateLimited(key, notBeforeMs);
  }

  #enqueue(key: string): void {
    this.#options.queue.add(key);
    this.#updateDepth();
  }

  #updateDepth(): void {
    this.#options.metrics.queueDepth.set(this.#options.queue.depth);
  }
}
