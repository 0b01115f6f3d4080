// A deduplicating, delay- and rate-limit-aware queue of keys, with client-go workqueue semantics.

import { type BackoffPolicy, backoffDelay, validateBackoffPolicy } from "../util/backoff.js";
import { type Clock, systemClock, type TimerHandle } from "../util/clock.js";
import { DueHeap } from "./due-heap.js";

export type WorkQueueOptions = {
  readonly clock?: Clock | undefined;
  /** Per-key retry delays for addRateLimited. */
  readonly backoff: BackoffPolicy;
  /** Source of jitter for addRateLimited; defaults to Math.random. */
  readonly random?: (() => number) | undefined;
  /** Hears what client-go's workqueue metrics count (see queue-metrics.ts). */
  readonly observer?: QueueObserver | undefined;
};

/** The moments client-go's queue reports to its metrics provider. */
export type QueueObserver = {
  /** The key became dirty (a duplicate add of a dirty key is not an add). */
  added(key: string): void;
  /** get() handed the key out. */
  taken(key: string): void;
  /** done() ended the key's processing. */
  finished(key: string): void;
  /** addAfter (and so addRateLimited) was called on a running queue. */
  retried(key: string): void;
};

const MAX_TIMER_MS = 2 ** 31 - 1;

type Waiter = { readonly resolve: (key: string | undefined) => void; readonly release: () => void };

/**
 * Invariants:
 * - a key is in #dirty iff it needs processing: either it sits in #ready, or it is processing and will be
 *   re-queued by done();
 * - #ready holds exactly the dirty keys that are not processing, each once;
 * - a key is never both dirty and delayed: an add supersedes a pending delay, and a delay for a key that
 *   will be processed anyway is dropped.
 */
export class WorkQueue {
  readonly #clock: Clock;
  readonly #policy: BackoffPolicy;
  readonly #random: () => number;
  readonly #observer: QueueObserver | undefined;

  // FIFO of ready keys; a head index avoids O(n) shift().
  #ready: string[] = [];
  #head = 0;
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #delayed = new DueHeap<string>();
  readonly #failures = new Map<string, number>();
  readonly #waiters: Waiter[] = [];
  #drainWaiters: (() => void)[] = [];

  // One timer, armed for the earliest delayed key: there can be many thousands of delayed keys.
  #timer: TimerHandle | undefined;
  #timerDue: number | undefined;
  #shutDown = false;

  constructor(options: WorkQueueOptions) {
    validateBackoffPolicy(options.backoff);
    this.#clock = options.clock ?? systemClock;
    this.#policy = options.backoff;
    this.#random = options.random ?? Math.random;
    this.#observer = options.observer;
  }

  /** Keys ready to be handed out. */
  get depth(): number {
    return this.#ready.length - this.#head;
  }

  /** Keys waiting for a delay (addAfter or addRateLimited) to pass. */
  get delayedCount(): number {
    return this.#delayed.size;
  }

  /** Keys handed out by get() and not yet done(). */
  get processingCount(): number {
    return this.#processing.size;
  }

  get isShutDown(): boolean {
    return this.#shutDown;
  }

  /** Queues the key now. Duplicates collapse; a key being processed is re-queued when done. */
  add(key: string): void {
    if (this.#shutDown) return;
    // Processing now satisfies any later due time too, so the pending delay is dropped.
    if (this.#delayed.delete(key)) this.#arm();
    this.#markDirty(key);
  }

  /**
   * Queues the key once delayMs has passed (<= 0 means now); if it is already waiting, the earlier due
   * time wins. Ignored when the key is already due for processing (ready, or dirty while processing).
   */
  addAfter(key: string, delayMs: number): void {
    if (!Number.isFinite(delayMs)) throw new RangeError(`addAfter needs a finite delay, got ${delayMs}`);
    if (this.#shutDown) return;
    this.#observer?.retried(key);
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    if (this.#dirty.has(key)) return;
    // Due times are on the monotonic clock: setting the wall clock must not hand keys out early or hold them.
    const due = this.#clock.monotonic() + delayMs;
    const current = this.#delayed.dueOf(key);
    if (current !== undefined && current <= due) return;
    this.#delayed.set(key, due);
    this.#arm();
  }

  /**
   * Queues the key after its per-key backoff (but not sooner than minDelayMs, e.g. a server's Retry-After),
   * counts one more failure, and returns the delay used.
   */
  addRateLimited(key: string, minDelayMs = 0): number {
    if (this.#shutDown) return 0;
    const failures = this.failures(key);
    const delay = Math.max(backoffDelay(this.#policy, failures, this.#random), minDelayMs);
    this.#failures.set(key, failures + 1);
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears the key's failure count, typically after a successful reconcile. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /**
   * Resolves with the next ready key (FIFO) and marks it processing; the caller must call done(key).
   * Waits while nothing is ready. Resolves undefined once shut down or when the signal aborts.
   */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (this.#shutDown || signal?.aborted) return Promise.resolve(undefined);
    const key = this.#takeReady();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => {
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        resolve(undefined);
      };
      const waiter: Waiter = { resolve, release: () => signal?.removeEventListener("abort", onAbort) };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Ends processing of the key; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    // Ignoring keys not in processing keeps a stray done() from duplicating a queued key.
    if (!this.#processing.delete(key)) return;
    this.#observer?.finished(key);
    if (this.#dirty.has(key)) this.#enqueue(key);
    if (this.#processing.size === 0) this.#notifyDrained();
  }

  /** Stops the queue: drops ready and delayed keys, releases waiting get() calls, ignores later adds. */
  shutDown(): void {
    if (this.#shutDown) return;
    this.#shutDown = true;
    this.#delayed.clear();
    this.#arm();
    this.#ready = [];
    this.#head = 0;
    this.#dirty.clear();
    for (const waiter of this.#waiters.splice(0)) {
      waiter.release();
      waiter.resolve(undefined);
    }
    if (this.#processing.size === 0) this.#notifyDrained();
  }

  /** Resolves once no key is processing, so in-flight work can finish before exit. */
  drained(): Promise<void> {
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  #markDirty(key: string): void {
    if (this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#observer?.added(key);
    // A key being processed waits for done(); never two holders of one key.
    if (!this.#processing.has(key)) this.#enqueue(key);
  }

  #enqueue(key: string): void {
    const waiter = this.#waiters.shift();
    if (waiter) {
      // Hand straight to a waiting get(), so the key is never visible as ready and taken twice.
      this.#startProcessing(key);
      waiter.release();
      waiter.resolve(key);
      return;
    }
    this.#ready.push(key);
  }

  #takeReady(): string | undefined {
    if (this.#head >= this.#ready.length) return undefined;
    const key = this.#ready[this.#head] as string;
    this.#head++;
    // Compact once the consumed prefix dominates, keeping memory bounded and shift amortised O(1).
    if (this.#head >= 1024 && this.#head * 2 >= this.#ready.length) {
      this.#ready = this.#ready.slice(this.#head);
      this.#head = 0;
    } else if (this.#head === this.#ready.length) {
      this.#ready = [];
      this.#head = 0;
    }
    this.#startProcessing(key);
    return key;
  }

  #startProcessing(key: string): void {
    this.#dirty.delete(key);
    this.#processing.add(key);
    this.#observer?.taken(key);
  }

  /** Keeps exactly one timer, for the earliest delayed key, or none. */
  #arm(): void {
    const next = this.#delayed.peek()?.due;
    if (next === this.#timerDue) return;
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = next;
    if (next === undefined) return;
    // Real timers fire after 1ms when asked for more than MAX_TIMER_MS; #onTimer re-arms if woken early.
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next - this.#clock.monotonic()));
    this.#timer = this.#clock.setTimeout(() => this.#onTimer(), delay);
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerDue = undefined;
    const now = this.#clock.monotonic();
    for (let top = this.#delayed.peek(); top && top.due <= now; top = this.#delayed.peek()) {
      this.#delayed.pop();
      this.#markDirty(top.key);
    }
    // Also re-arms if the timer fired a little early.
    this.#arm();
  }

  #notifyDrained(): void {
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
