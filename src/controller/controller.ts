// The workers: take keys from the queue, reconcile each with bounded concurrency, and turn the outcome into what
// the queue does next (forget, look again later, retry with backoff, give up). With leader election, only the
// leader reconciles; followers keep their queue deduplicated and act on nothing.
import PQueue from "p-queue";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import type { WorkQueue } from "../queue/work-queue.js";
import { messageOf } from "../util/message-of.js";
import { recordReconcile } from "./reconcile-metrics.js";
import type { ReconcileResult, Reconciler } from "./reconciler.js";

/** Leadership as the controller sees it; absent when this instance always acts. */
export type Leadership = {
  readonly isLeader: boolean;
  waitForLeadership(signal: AbortSignal): Promise<boolean>;
};

export type ControllerOptions = {
  readonly queue: WorkQueue;
  readonly reconciler: Pick<Reconciler, "reconcile">;
  readonly workers: number;
  /** Failed attempts per key before giving up until the next change or resync. */
  readonly maxRetries: number;
  readonly leadership?: Leadership;
  /** A term of leadership begins (before the first key of it is reconciled). */
  readonly onLeading?: () => void;
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

  /** Hands keys to the workers until the signal aborts (the queue shuts down), then waits for in-flight ones. */
  async run(signal: AbortSignal): Promise<void> {
    const { queue, leadership, logger } = this.#options;
    signal.addEventListener("abort", () => queue.shutDown(), { once: true });
    for (;;) {
      if (leadership && !leadership.isLeader) {
        if (!(await leadership.waitForLeadership(signal))) break;
        logger.info("leading: acting on broken pods");
        this.#options.onLeading?.();
      }
      // Take a key only when a worker is free, so keys wait in the deduplicating queue, not here.
      await this.#executor.onSizeLessThan(1);
      const key = await queue.get(signal);
      if (key === undefined) break;
      this.#options.metrics.queueDepth.set(queue.depth);
      void this.#executor.add(() => this.#process(key));
    }
    await this.#executor.onIdle();
  }

  async #process(key: string): Promise<void> {
    const { queue, reconciler, metrics, logger, leadership } = this.#options;
    // The one check at the moment of acting: leadership may have gone while the key waited for a free worker.
    // Hand it back untouched, for the next term (or the next leader's resync), rather than act without the Lease.
    if (leadership && !leadership.isLeader) {
      queue.done(key);
      queue.add(key);
      return;
    }
    const started = performance.now();
    let result: ReconcileResult;
    try {
      result = await reconciler.reconcile(key);
    } catch (error) {
      // A bug or an unexpected error must not kill the worker: log it and retry like a failed action.
      logger.error("reconcile threw", {
        key,
        error: error instanceof Error && error.stack ? error.stack : String(error),
      });
      result = { kind: "retry", notBeforeMs: 0, error: messageOf(error) };
    }
    recordReconcile(metrics, result, (performance.now() - started) / 1000);
    this.#requeue(key, result);
    queue.done(key);
    metrics.queueDepth.set(queue.depth);
  }

  /** What the queue does with the key after this reconcile. */
  #requeue(key: string, result: ReconcileResult): void {
    const { queue, metrics, logger, maxRetries } = this.#options;
    switch (result.kind) {
      case "done":
        queue.forget(key);
        return;
      case "requeue":
        if (!result.keepFailures) queue.forget(key);
        queue.addAfter(key, result.afterMs);
        return;
      case "retry":
        if (queue.failures(key) >= maxRetries) {
          metrics.retriesExhausted.inc();
          logger.warn("giving up on pod until it changes or the next resync", {
            key,
            retries: maxRetries,
            error: result.error,
          });
          queue.forget(key);
          return;
        }
        metrics.queueRetries.inc();
        // Retry-After from the server wins when it asks for a longer pause than our backoff.
        queue.addRateLimited(key, result.notBeforeMs);
        return;
    }
  }
}
