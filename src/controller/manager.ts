// The manager: owns the order things start and stop in, like controller-runtime's manager.
//
//   start: 1. reflectors (every cache lists, then watches)   2. leader election (every replica campaigns)
//          3. once every cache holds its first list: the workers and the periodic ticks
//   stop:  in reverse: 3. workers take no new key and finish the reconciles in flight; then the outbox (Events)
//          is written; 2. the Lease is released (a successor must not act while we still do); 1. the watches end.
// Deciding before every cache is listed would hold pods for "no Ready agent" only because that list is late.
import type { RunningCache } from "../informer/reflector.js";
import type { Logger } from "../observe/logger.js";
import { type Clock, systemClock } from "../util/clock.js";

/** Something that runs until its signal aborts. */
export type Runnable = { run(signal: AbortSignal): Promise<void> };

/** Work that continues in the background after the workers stop (Events): drained before the Lease goes. */
export type Outbox = { drain(): Promise<void>; stopRetrying(): void; readonly backlog: number };

export type ManagerParts = {
  readonly reflectors: readonly RunningCache[];
  readonly elector?: Runnable | undefined;
  /** The controller's workers, and any other loop that acts on the caches (startup taints). */
  readonly workers: readonly Runnable[];
  /** Called every `everyMs` while the workers run. */
  readonly ticks: readonly { readonly everyMs: number; readonly tick: () => void }[];
  readonly outbox: Outbox;
  readonly logger: Logger;
  /** Times stop()'s budget; default the system's. */
  readonly clock?: Clock;
};

export type StopReport = {
  /** The reconciles in flight finished within the budget. */
  readonly workersStopped: boolean;
  /** Every Event was written within the budget. */
  readonly outboxDrained: boolean;
  /** Every watch ended within WATCHES_STOP_MS of being told to. */
  readonly watchesStopped: boolean;
};

/**
 * How long the watches get to end once told to: aborting cancels their requests, so they end at once unless a bug
 * left one waiting on something deaf to its signal. Past it the process shuts down without them (a warning names
 * it), rather than ignore SIGTERM until the kubelet's SIGKILL.
 */
const WATCHES_STOP_MS = 5_000;

export class Manager {
  readonly #parts: ManagerParts;
  readonly #stopWorkers = new AbortController();
  readonly #stopElection = new AbortController();
  readonly #stopReflectors = new AbortController();
  #reflecting: Promise<unknown> = Promise.resolve();
  #electing: Promise<void> = Promise.resolve();
  #working: Promise<unknown> = Promise.resolve();
  #cachesStarted = false;

  constructor(parts: ManagerParts) {
    this.#parts = parts;
  }

  /** Every cache holds its first full list. */
  get synced(): boolean {
    return this.#parts.reflectors.every((reflector) => reflector.synced);
  }

  /** Milliseconds since the API server last answered the cache that has heard from it least recently. */
  get idleMs(): number {
    return Math.max(...this.#parts.reflectors.map((reflector) => reflector.idleMs));
  }

  /** Resolves true once every cache holds its first list; false if the signal aborts first. */
  async waitForSync(signal: AbortSignal): Promise<boolean> {
    return (await Promise.all(this.#parts.reflectors.map((reflector) => reflector.waitForSync(signal)))).every(Boolean);
  }

  /**
   * 1. alone: the caches list and watch (read only), while the caller still checks what must hold before anything
   * acts (run: the identity and permissions). start() does it too, once.
   */
  startCaches(): void {
    if (this.#cachesStarted) return;
    this.#cachesStarted = true;
    const { reflectors } = this.#parts;
    this.#reflecting = Promise.all(reflectors.map((reflector) => reflector.run(this.#stopReflectors.signal)));
  }

  start(): void {
    this.startCaches();
    const { elector } = this.#parts;
    if (elector) this.#electing = elector.run(this.#stopElection.signal);
    this.#working = this.#runWorkers(this.#stopWorkers.signal);
  }

  /**
   * Stops in reverse order. `budgetMs` bounds the wait for the workers and the outbox together (in-flight repairs
   * first, then the Events describing them); past it, the outbox stops retrying and the rest stops anyway.
   */
  async stop(budgetMs = Number.POSITIVE_INFINITY): Promise<StopReport> {
    const { outbox, logger, clock = systemClock } = this.#parts;
    this.#stopWorkers.abort();
    const deadline = new Promise<false>((resolve) => {
      if (Number.isFinite(budgetMs)) clock.setTimeout(() => resolve(false), budgetMs, { unref: true });
    });
    const workersStopped = await Promise.race([this.#working.then(() => true), deadline]);
    if (!workersStopped) logger.warn("in-flight actions did not finish within the shutdown timeout");
    const outboxDrained = await Promise.race([outbox.drain().then(() => true), deadline]);
    if (!outboxDrained) {
      logger.warn("events not written within the shutdown timeout", { backlog: outbox.backlog });
      outbox.stopRetrying();
    }
    this.#stopElection.abort();
    await this.#electing;
    this.#stopReflectors.abort();
    const watchesStopped = await Promise.race([
      this.#reflecting.then(() => true),
      new Promise<false>((resolve) => clock.setTimeout(() => resolve(false), WATCHES_STOP_MS, { unref: true })),
    ]);
    if (!watchesStopped) {
      logger.warn(`a watch did not end within ${WATCHES_STOP_MS / 1000} s of being stopped; shutting down without it`);
    }
    return { workersStopped, outboxDrained, watchesStopped };
  }

  async #runWorkers(signal: AbortSignal): Promise<void> {
    const { workers, ticks } = this.#parts;
    if (!(await this.waitForSync(signal))) return;
    const timers = ticks.map(({ everyMs, tick }) => setInterval(tick, everyMs));
    try {
      await Promise.all(workers.map((worker) => worker.run(signal)));
    } finally {
      for (const timer of timers) clearInterval(timer);
    }
  }
}
