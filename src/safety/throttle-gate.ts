// Remembers, per pod key, until when the API server asked us to wait (Retry-After on a 429 or 503), so that no
// later reconcile of that pod — a watch event, a resync — calls again sooner than the server asked.

export class ThrottleGate {
  readonly #until = new Map<string, number>();
  readonly #now: () => number;

  /** `now`: a monotonic clock, so a wall clock set forward does not end a wait the server asked for. */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** The server throttled a call for `key`: no new call for it before `afterMs` from now. */
  hold(key: string, afterMs: number): void {
    this.#until.set(key, this.#now() + Math.max(0, afterMs));
  }

  /** Milliseconds left before `key` may call again; 0 once free (the entry is then dropped). */
  waitMs(key: string): number {
    const until = this.#until.get(key);
    if (until === undefined) return 0;
    const left = until - this.#now();
    if (left > 0) return left;
    this.#until.delete(key);
    return 0;
  }

  /** The pod is gone: drop its entry, so memory follows the cluster. */
  forget(key: string): void {
    this.#until.delete(key);
  }

  /** Every wait, as plain data, read-only (for tests). */
  snapshot(): readonly (readonly [string, number])[] {
    return [...this.#until];
  }

  get size(): number {
    return this.#until.size;
  }
}
