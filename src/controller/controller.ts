// A controller: runs one reconciler over a keyed work queue with N workers, each a loop on queue.get(), as
// client-go's and controller-runtime's controllers do. The queue guarantees one reconcile per key at a time; the
// outcome decides what the queue does next (forget, look again later, retry with backoff, give up). With leader
// election only the leader reconciles: followers keep their queue deduplicated and act on nothing. Pods and
// startup taints both run on it.
import type { Logger } from "../observe/logger.js";
import type { ControllerSeries } from "../observe/standard-metrics.js";
import type { WorkQueue } from "../queue/work-queue.js";
import { messageOf, stackOf } from "../util/message-of.js";
import { type ReconcileResult, reconcileResultLabel } from "./reconcile-result.js";

/** Leadership as a controller sees it; absent when this instance always acts. */
export type Leadership = {
  readonly isLeader: boolean;
  /** How many terms have begun: a new number means the Lease was acquired again, even if nobody watched it go. */
  readonly term: number;
  waitForLeadership(signal: AbortSignal): Promise<boolean>;
};

/** Reconcile `key`, now or after `afterMs` (what a trigger asks of the controller). */
export type Request = { readonly key: string; readonly afterMs?: number };

/** Reconciles one key: level-based, it re-reads its caches and says what the queue does next. */
export type KeyReconciler = { reconcile(key: string): Promise<ReconcileResult> };

export type ControllerOptions = {
  readonly queue: WorkQueue;
  readonly reconciler: KeyReconciler;
  readonly workers: number;
  /** Failed attempts per key before giving up until the next change or resync. */
  readonly maxRetries: number;
  readonly leadership?: Leadership | undefined;
  /** A term of leadership begins (before the first key of it is reconciled). */
  readonly onLeading?: () => void;
  /** The controller's reconcile series; its name labels the log lines too. */
  readonly metrics: ControllerSeries;
  /** Counts keys dropped after --max-retries failures. */
  readonly retriesExhausted?: { inc(): void };
  readonly logger: Logger;
};

export class Controller {
  readonly #options: ControllerOptions;
  /** The wait for the next term, shared by the workers so a term begins (onLeading) once. */
  #nextTerm: Promise<boolean> | undefined;
  /** The term onLeading last ran for; the one under way at construction needs no fresh start. */
  #begunTerm: number;

  constructor(options: ControllerOptions) {
    this.#options = options;
    this.#begunTerm = options.leadership?.term ?? 0;
  }

  /** Puts the key on the queue, now or after the delay (deduplicated: a key waiting or in work is not doubled). */
  enqueue({ key, afterMs }: Request): void {
    if (afterMs === undefined) this.#options.queue.add(key);
    else this.#options.queue.addAfter(key, afterMs);
  }

  /** No key ready to be worked and none in work (keys waiting out a delay do not count): scan's pass is done. */
  idle(): boolean {
    const { queue } = this.#options;
    return queue.depth === 0 && queue.processingCount === 0;
  }

  /** Runs the workers until the signal aborts (the queue shuts down); resolves once each has finished its key. */
  async run(signal: AbortSignal): Promise<void> {
    const { queue, workers } = this.#options;
    signal.addEventListener("abort", () => queue.shutDown(), { once: true });
    await Promise.all(Array.from({ length: workers }, () => this.#worker(signal)));
  }

  async #worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (!(await this.#leading(signal))) return;
      const key = await this.#options.queue.get(signal);
      if (key === undefined) return;
      await this.#process(key);
    }
  }

  /** Resolves true while this instance leads (or always acts), else once it leads again; false when aborted. */
  #leading(signal: AbortSignal): Promise<boolean> {
    const { leadership } = this.#options;
    if (!leadership || leadership.isLeader) return Promise.resolve(true);
    this.#nextTerm ??= leadership.waitForLeadership(signal).then((leading) => {
      this.#nextTerm = undefined;
      if (leading) this.#beginTerm(leadership);
      return leading;
    });
    return this.#nextTerm;
  }

  /** Runs onLeading once per term, before the term's first reconcile, however the term was noticed. */
  #beginTerm(leadership: Leadership): void {
    if (leadership.term === this.#begunTerm) return;
    this.#begunTerm = leadership.term;
    this.#options.logger.info("leading: reconciling", { term: leadership.term });
    this.#options.onLeading?.();
  }

  async #process(key: string): Promise<void> {
    const { queue, reconciler, metrics, logger, leadership } = this.#options;
    // The one leadership check, at the moment of acting: get() may have waited long (a frozen process, a quiet
    // queue) and the Lease may have gone meanwhile. Hand the key back untouched, for the next term (or the next
    // leader's own caches), rather than act without the Lease. No await between here and the reconcile's start.
    if (leadership && !leadership.isLeader) {
      queue.done(key);
      queue.add(key);
      return;
    }
    // Lost and regained while every worker waited in get(): nobody waited for this term, so it begins here.
    if (leadership) this.#beginTerm(leadership);
    const started = performance.now();
    let result: ReconcileResult;
    metrics.working(1);
    try {
      result = await reconciler.reconcile(key);
    } catch (error) {
      // A bug must not kill the worker: log it, count it, and retry like a failed action.
      metrics.panicked();
      logger.error("reconcile threw", { key, error: stackOf(error) });
      result = { kind: "retry", notBeforeMs: 0, error: messageOf(error) };
    } finally {
      metrics.working(-1);
    }
    metrics.reconciled(reconcileResultLabel(result), (performance.now() - started) / 1000);
    this.#requeue(key, result);
    queue.done(key);
  }

  /** What the queue does with the key after this reconcile. */
  #requeue(key: string, result: ReconcileResult): void {
    const { queue, logger, maxRetries } = this.#options;
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
          this.#options.retriesExhausted?.inc();
          logger.warn("giving up on the key until it changes or the next resync", {
            key,
            retries: maxRetries,
            error: result.error,
          });
          queue.forget(key);
          return;
        }
        // Retry-After from the server wins when it asks for a longer pause than our backoff.
        queue.addRateLimited(key, result.notBeforeMs);
        return;
    }
  }
}
