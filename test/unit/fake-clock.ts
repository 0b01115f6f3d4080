// A Clock for tests whose time moves only when the test advances it.

import { setImmediate as nextMacrotask } from "node:timers/promises";
import type { Clock, TimerHandle } from "../../src/util/clock.js";

type FakeTimer = { readonly due: number; readonly seq: number; readonly callback: () => void };

export class FakeClock implements Clock {
  /** The monotonic time; timers are due on it. */
  #now: number;
  /** How far the wall clock has been set away from the monotonic one (stepWallClock). */
  #wallOffset = 0;
  #seq = 0;
  readonly #timers = new Map<number, FakeTimer>();
  #advancing = false;

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now + this.#wallOffset;
  }

  /** Starts equal to now(); only advancing moves it, stepWallClock does not. */
  monotonic(): number {
    return this.#now;
  }

  /** Sets the wall clock forward (or back, when negative) as NTP or a VM resumed from a snapshot would: now() jumps,
   * monotonic() and the timers do not. */
  stepWallClock(ms: number): void {
    this.#wallOffset += ms;
  }

  /** Negative, NaN or zero delays fire on the next advance, even advance(0). */
  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const seq = ++this.#seq;
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
    this.#timers.set(seq, { due: this.#now + delay, seq, callback });
    return { id: seq };
  }

  /** Unknown or already-fired handles are ignored, as with the real clearTimeout. */
  clearTimeout(handle: TimerHandle): void {
    if (typeof handle.id === "number") this.#timers.delete(handle.id);
  }

  /** Timers scheduled and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** When the earliest pending timer is due, or undefined if none is pending. */
  get nextDue(): number | undefined {
    return this.#earliest(Number.POSITIVE_INFINITY)?.due;
  }

  /**
   * Moves time forward by ms as a blocked event loop lives it: no timer fires meanwhile; those that came due fire
   * late, on the next advance (reading now() as it is then, past their due time).
   */
  block(ms: number): void {
    this.#now = this.#begin(ms);
    this.#advancing = false;
  }

  /**
   * Moves time forward by ms, firing every timer due by then in due order (ties in scheduling order),
   * including timers that callbacks schedule inside the window. now() reads each timer's due time
   * while its callback runs. Promise continuations do not run in between; use advanceAsync for that.
   */
  advance(ms: number): void {
    const target = this.#begin(ms);
    try {
      for (let timer = this.#takeDue(target); timer; timer = this.#takeDue(target)) timer.callback();
      this.#now = target;
    } finally {
      this.#advancing = false;
    }
  }

  /** Like advance, but lets pending promise continuations run before and after each timer fires. */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#begin(ms);
    try {
      await nextMacrotask();
      for (let timer = this.#takeDue(target); timer; timer = this.#takeDue(target)) {
        timer.callback();
        await nextMacrotask();
      }
      this.#now = target;
    } finally {
      this.#advancing = false;
    }
  }

  #begin(ms: number): number {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`advance needs a finite ms >= 0, got ${ms}`);
    // A callback advancing the clock would reorder time under the outer loop.
    if (this.#advancing) throw new Error("FakeClock.advance is not re-entrant");
    this.#advancing = true;
    return this.#now + ms;
  }

  #takeDue(target: number): FakeTimer | undefined {
    const timer = this.#earliest(target);
    if (!timer) return undefined;
    this.#timers.delete(timer.seq);
    this.#now = Math.max(this.#now, timer.due);
    return timer;
  }

  // A linear scan keeps this simple; tests hold few timers.
  #earliest(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const timer of this.#timers.values()) {
      if (timer.due > limit) continue;
      if (!best || timer.due < best.due || (timer.due === best.due && timer.seq < best.seq)) best = timer;
    }
    return best;
  }
}
