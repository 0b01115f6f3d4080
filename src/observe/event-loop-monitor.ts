// Heartbeat timer that measures event loop lag: for the "event loop alive" health check and, as the process's only
// periodic wake-up while idle, for the nodejs_eventloop_lag_* metrics (observe/metrics.ts).

import { createHistogram, type RecordableHistogram } from "node:perf_hooks";
import { type Clock, systemClock, type TimerHandle } from "../util/clock.js";

export type EventLoopMonitorOptions = {
  /** How often the heartbeat fires; default 500 ms. */
  readonly intervalMs?: number;
  /** Its timer and its time (the monotonic one); default the system's. */
  readonly clock?: Clock;
};

/** The heartbeats' delays since the last take(), in seconds (all 0 when there was none). */
export type LagStatistics = {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly stddev: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
};

const NS_PER_S = 1e9;

export class EventLoopMonitor {
  readonly #intervalMs: number;
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  /** When the next heartbeat is due (the clock's monotonic milliseconds). */
  #dueAt: number;
  #lastLagMs = 0;
  /** Every heartbeat's delay in nanoseconds, until takeLagStatistics() reads and clears them. */
  readonly #delays: RecordableHistogram = createHistogram();

  constructor(opts: EventLoopMonitorOptions = {}) {
    this.#intervalMs = opts.intervalMs ?? 500;
    this.#clock = opts.clock ?? systemClock;
    this.#dueAt = this.#clock.monotonic() + this.#intervalMs;
    this.#schedule();
  }

  /** How late the loop is: the last heartbeat's delay, or how overdue the next one already is if that is worse. */
  lagMs(): number {
    if (this.#timer === undefined) return this.#lastLagMs;
    return Math.max(this.#lastLagMs, this.#clock.monotonic() - this.#dueAt);
  }

  isAlive(maxLagMs: number): boolean {
    return this.lagMs() <= maxLagMs;
  }

  /** The delays of the heartbeats since the previous call (a scrape), then forgets them. */
  takeLagStatistics(): LagStatistics {
    const delays = this.#delays;
    const seconds = (ns: number) => (delays.count === 0 ? 0 : ns / NS_PER_S);
    const statistics = {
      count: delays.count,
      min: seconds(delays.min),
      max: seconds(delays.max),
      mean: seconds(delays.mean),
      stddev: seconds(delays.stddev),
      p50: seconds(delays.percentile(50)),
      p90: seconds(delays.percentile(90)),
      p99: seconds(delays.percentile(99)),
    };
    delays.reset();
    return statistics;
  }

  /** Stops the heartbeat; lagMs() then keeps reporting the last measurement. */
  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    // The monitor must never be what keeps the process running.
    this.#timer = this.#clock.setTimeout(() => this.#beat(), this.#intervalMs, { unref: true });
  }

  #beat(): void {
    const now = this.#clock.monotonic();
    this.#lastLagMs = Math.max(0, now - this.#dueAt);
    // The histogram takes whole nanoseconds from 1 up.
    this.#delays.record(Math.max(1, Math.round(this.#lastLagMs * 1e6)));
    this.#dueAt = now + this.#intervalMs;
    this.#schedule();
  }
}

export function startEventLoopMonitor(opts: EventLoopMonitorOptions = {}): EventLoopMonitor {
  return new EventLoopMonitor(opts);
}
