// Lease duration, renew deadline and retry period: client-go's defaults, its sanity rules, and its jitter.

export type ElectionTimings = {
  /** How long a follower waits, from when it saw the lease last change, before taking it over. */
  readonly leaseDurationMs: number;
  /** How long a leader keeps acting without a successful renewal before it steps down. */
  readonly renewDeadlineMs: number;
  /** Pause between acquire attempts (jittered) and between renewals. */
  readonly retryPeriodMs: number;
};

export const DEFAULT_ELECTION_TIMINGS: ElectionTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/** client-go's wait.Jitter factor for acquire retries: a pause lands in [retry, 2.2 × retry]. */
export const JITTER_FACTOR = 1.2;

/**
 * Throws a RangeError unless renewDeadline < leaseDuration (a leader must stop acting before followers may
 * take over) and retryPeriod × 1.2 < renewDeadline (client-go's rule: room for a retry before stepping down).
 */
export function validateElectionTimings(timings: ElectionTimings): void {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = timings;
  for (const [name, value] of Object.entries(timings)) {
    if (!Number.isFinite(value) || value <= 0)
      throw new RangeError(`leader election: ${name} must be > 0, got ${value}`);
  }
  // The Lease stores whole seconds; anything shorter would be rounded up for every other elector.
  if (leaseDurationMs < 1000) {
    throw new RangeError(`leader election: lease duration must be at least 1s, got ${leaseDurationMs}ms`);
  }
  if (renewDeadlineMs >= leaseDurationMs) {
    throw new RangeError(
      `leader election: renew deadline (${renewDeadlineMs}ms) must be shorter than the lease duration (${leaseDurationMs}ms)`,
    );
  }
  if (retryPeriodMs * JITTER_FACTOR >= renewDeadlineMs) {
    throw new RangeError(
      `leader election: renew deadline (${renewDeadlineMs}ms) must be longer than ${JITTER_FACTOR} × the retry period (${retryPeriodMs}ms)`,
    );
  }
}

/** client-go's wait.Jitter: duration plus up to factor × duration, uniformly. */
export function jittered(durationMs: number, factor = JITTER_FACTOR, random: () => number = Math.random): number {
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(1, Math.max(0, r)) : 0;
  return durationMs + unit * factor * durationMs;
}
