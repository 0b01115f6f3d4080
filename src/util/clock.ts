// The clock every time-based component takes, so tests can drive time by hand.

export type TimerHandle = { readonly id: unknown };

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** `unref`: the timer alone does not keep the process running (a background chore, not work to finish). */
  setTimeout(callback: () => void, delayMs: number, options?: { readonly unref?: boolean }): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs, options) => {
    const timer = setTimeout(callback, delayMs);
    if (options?.unref) timer.unref();
    return { id: timer };
  },
  clearTimeout: (handle) => clearTimeout(handle.id as NodeJS.Timeout),
};
