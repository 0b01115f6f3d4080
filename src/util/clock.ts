// The clock every time-based component takes, so tests can drive time by hand.

export type TimerHandle = { readonly id: unknown };

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => {
    const timer = setTimeout(callback, delayMs);
    return { id: timer };
  },
  clearTimeout: (handle) => clearTimeout(handle.id as NodeJS.Timeout),
};
