// The clock every time-based component takes, so tests can drive time by hand.

export type TimerHandle = { readonly id: unknown };

export interface Clock {
  /** Milliseconds since the epoch: the wall clock, for timestamps others read (it jumps when the clock is set). */
  now(): number;
  /**
   * Milliseconds on a clock that setting the wall clock does not move (an NTP step, a VM resumed from a snapshot
   * whose clock is then corrected): for measuring how long something took or how long ago it happened.
   */
  monotonic(): number;
  /** `unref`: the timer alone does not keep the process running (a background chore, not work to finish). */
  setTimeout(callback: () => void, delayMs: number, options?: { readonly unref?: boolean }): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (callback, delayMs, options) => {
    const timer = setTimeout(callback, delayMs);
    if (options?.unref) timer.unref();
    return { id: timer };
  },
  clearTimeout: (handle) => clearTimeout(handle.id as NodeJS.Timeout),
};

/** One moment on both clocks: the wall time to compare with the API server's and kubelets' timestamps (and to
 * show), the monotonic time to measure from. */
export type Instant = { readonly wallMs: number; readonly monoMs: number };

export const instantOf = (clock: Clock): Instant => ({ wallMs: clock.now(), monoMs: clock.monotonic() });

/** The wall time, as the wall clock reads now, of a past monotonic reading: for showing it, never for measuring. */
export const wallTimeOf = (clock: Clock, monoMs: number): number => clock.now() - (clock.monotonic() - monoMs);
