// Declares a watch dead when no byte came for a while: the watch and the streamed list both arm it at the dial
// and at every chunk, and abort their request through its signal.
//
// Arming only notes the time: one timer runs per watchdog, and when it fires early (bytes came meanwhile) it sleeps
// again for what is left. Re-creating a timer on every chunk cost ~3% of the per-node instance's CPU per watch event.

import { type Clock, systemClock, type TimerHandle } from "../util/clock.js";

export class StallWatchdog {
  readonly #stop = new AbortController();
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  /** When a byte last came (or the dial began); the stall deadline is this plus the timeout. */
  #armedAt = 0;
  #stalled = false;
  #disposed = false;

  /** Times on the clock's monotonic time: a wall clock set forward must not declare a live watch dead. */
  constructor(timeoutMs: number, clock: Clock = systemClock) {
    this.#timeoutMs = timeoutMs;
    this.#clock = clock;
  }

  /** Aborts when the watchdog fires or is disposed. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** True once it fired: the abort was a stall, not the caller's. */
  get stalled(): boolean {
    return this.#stalled;
  }

  /** (Re)starts the countdown: call at the dial and whenever a byte arrives. */
  arm(): void {
    if (this.#disposed || this.#stalled) return;
    this.#armedAt = this.#clock.monotonic();
    if (this.#timer === undefined) this.#wait(this.#timeoutMs);
  }

  dispose(): void {
    this.#disposed = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#stop.abort();
  }

  #wait(ms: number): void {
    this.#timer = this.#clock.setTimeout(() => this.#check(), Math.max(1, Math.ceil(ms)));
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#disposed) return;
    const left = this.#armedAt + this.#timeoutMs - this.#clock.monotonic();
    if (left > 0) {
      this.#wait(left);
      return;
    }
    this.#stalled = true;
    this.#stop.abort();
  }
}
