// Polling helpers for things that become true later (servers coming up, controllers acting).
import { setTimeout as sleep } from "node:timers/promises";

/** Thrown by a check to stop waiting at once: the awaited thing can no longer happen. */
export class GiveUp extends Error {}

/**
 * Polls `check` until it returns a value other than undefined/false, or throws after the timeout.
 * Other errors from `check` count as "not yet"; a GiveUp ends the wait at once.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 10_000, intervalMs = 50 } = {},
): Promise<T> {
  // The monotonic clock: a wall clock set forward meanwhile (an NTP step, this VM resumed from a snapshot and its
  // clock corrected) would end the wait at once, however little time had passed for what is awaited.
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const result = await check();
      if (result !== undefined && result !== false) return result;
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
