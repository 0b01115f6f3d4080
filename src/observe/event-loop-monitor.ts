// Heartbeat timer that measures event loop lag, for the "event loop alive" health check.

import { performance } from "node:perf_hooks";

export type EventLoopMonitorOptions = {
  /** How often the heartbeat fires; default 500 ms. */
  readonly intervalMs?: number;
};

export class EventLoopMonitor {
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  /** When the next heartbeat is due (performance.now() milliseconds). */
  #dueAt: number;
  #lastLagMs = 0;

  constructor(opts: EventLoopMonitorOptions = {}) {
    this.#intervalMs = opts.intervalMs ?? 500;
    this.#dueAt = performance.now() + this.#intervalMs;
    this.#schedule();
  }

  /** How late the loop is: the last heartbeat's delay, or how overdue the next one already is if that is worse. */
  lagMs(): number {
    if (this.#timer === undefined) return this.#lastLagMs;
    return Math.max(this.#lastLagMs, performance.now() - this.#dueAt);
  }

  isAlive(maxLagMs: number): boolean {
    return this.lagMs() <= maxLagMs;
  }

  /** Stops the heartbeat; lagMs() then keeps reporting the last measurement. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    this.#timer = setTimeout(() => this.#beat(), this.#intervalMs);
    // The monitor must never be what keeps the process running.
    this.#timer.unref();
  }

  #beat(): void {
    const now = performance.now();
    this.#lastLagMs = Math.max(0, now - this.#dueAt);
    this.#dueAt = now + this.#intervalMs;
    this.#schedule();
  }
}

export function startEventLoopMonitor(opts: EventLoopMonitorOptions = {}): EventLoopMonitor {
  return new EventLoopMonitor(opts);
}
