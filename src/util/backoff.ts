// Capped exponential backoff with tunable jitter, as a pure function and a small stateful counter.

export type BackoffPolicy = {
  /** Delay before jitter for attempt 0, in milliseconds. */
  readonly baseMs: number;
  /** Hard cap: no delay is ever larger, jitter included. */
  readonly maxMs: number;
  /** Growth per attempt; defaults to 2. */
  readonly factor?: number;
  /**
   * Fraction of the capped delay that is randomised, 0..1; defaults to 0.
   * 1 is "full jitter" (uniform in [0, d]), 0.5 is "equal jitter" (uniform in [d/2, d]).
   */
  readonly jitter?: number;
};

const DEFAULT_FACTOR = 2;

/** Throws a RangeError naming the first field that makes no sense. */
export function validateBackoffPolicy(policy: BackoffPolicy): void {
  const { baseMs, maxMs, factor = DEFAULT_FACTOR, jitter = 0 } = policy;
  if (!Number.isFinite(baseMs) || baseMs < 0) throw new RangeError(`backoff baseMs must be >= 0, got ${baseMs}`);
  if (!Number.isFinite(maxMs) || maxMs < 0) throw new RangeError(`backoff maxMs must be >= 0, got ${maxMs}`);
  if (!Number.isFinite(factor) || factor < 1) throw new RangeError(`backoff factor must be >= 1, got ${factor}`);
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`backoff jitter must be in 0..1, got ${jitter}`);
}

/**
 * Delay for the given attempt (0 = first retry): min(maxMs, baseMs * factor^attempt),
 * of which the `jitter` fraction is scaled by random(). Always within [0, maxMs].
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  validateBackoffPolicy(policy);
  const { baseMs, maxMs, factor = DEFAULT_FACTOR, jitter = 0 } = policy;
  // NaN and negatives count as the first attempt; the clamp keeps 1 ** Infinity (NaN) out.
  const n = attempt > 0 ? Math.min(Math.floor(attempt), Number.MAX_SAFE_INTEGER) : 0;
  // factor^n overflows to Infinity for large n; min() with the cap absorbs that (baseMs 0 is special: 0*Inf = NaN).
  const capped = baseMs === 0 ? 0 : Math.min(maxMs, baseMs * factor ** n);
  // A misbehaving random source must not push the delay out of bounds.
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(1, Math.max(0, r)) : 0;
  const delay = capped * (1 - jitter) + capped * jitter * unit;
  return Math.min(maxMs, Math.max(0, delay));
}

/** Counts consecutive failures and hands out the next delay; reset() after a success. */
export class Backoff {
  readonly #policy: BackoffPolicy;
  readonly #random: () => number;
  #attempts = 0;

  constructor(policy: BackoffPolicy, random: () => number = Math.random) {
    validateBackoffPolicy(policy);
    this.#policy = policy;
    this.#random = random;
  }

  /** How many delays next() has handed out since the last reset. */
  get attempts(): number {
    return this.#attempts;
  }

  next(): number {
    const delay = backoffDelay(this.#policy, this.#attempts, this.#random);
    this.#attempts++;
    return delay;
  }

  reset(): void {
    this.#attempts = 0;
  }
}
