// Polling helpers for things that become true later (servers coming up, controllers acting).
import { setTimeout as sleep } from "node:timers/promises";

/** Thrown by a check to stop waiting at once: the awaited thing can no longer happen. */
export class GiveUp extends Error {}

/**
 * What a check returns once done: `true`, or the awaited thing itself: an object, but not a number or string, a
 * promise (a forgotten `await`) nor an array (done even when empty).
 */
export type Done = true | (object & { readonly then?: never; readonly length?: never });
/** What a check returns while not done. */
export type NotYet = false | undefined | null;

/**
 * Polls `check` until it returns `true` or an object, or throws after the timeout. A number or string is refused
 * (a TypeError, at once): `0`, `""` and `NaN` would otherwise be "done" or "not yet" by accident, so a check says
 * which it means (`count >= 3`, `text.includes(...)`). An array is refused too (an empty one is an object, "done"
 * before anything arrived): a check returns `list.length > 0 && { list }` or the test it means.
 * Other errors from `check` count as "not yet"; a GiveUp ends the wait at once.
 */
export async function waitFor<T extends Done>(
  what: string,
  check: () => Promise<T | NotYet> | T | NotYet,
  { timeoutMs = 10_000, intervalMs = 50 } = {},
): Promise<T> {
  // The monotonic clock: a wall clock set forward meanwhile (an NTP step, this VM resumed from a snapshot and its
  // clock corrected) would end the wait at once, however little time had passed for what is awaited.
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const result = await check();
      if (isDone(result)) return result;
      if (!isNotYet(result)) throw new GiveUp(`the check for ${what} returned ${describe(result)}: ${REFUSED}`);
    } catch (error) {
      if (error instanceof GiveUp) throw error;
      lastError = error;
    }
    if (performance.now() > deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`, { cause: lastError });
    }
    await sleep(intervalMs);
  }
}

const REFUSED = "a check returns true or the awaited object when done, false/undefined/null while not";

function isDone<T extends Done>(result: T | NotYet): result is T {
  return result === true || (typeof result === "object" && result !== null && !Array.isArray(result));
}

function isNotYet(result: unknown): result is NotYet {
  return result === false || result === undefined || result === null;
}

function describe(result: unknown): string {
  return Array.isArray(result) ? `an array of ${result.length}` : `${typeof result} ${String(result)}`;
}
