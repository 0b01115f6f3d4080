// Paces deletions cluster-wide: a token bucket with reservations, so held pods wake once, at their turn.
import { type Clock, systemClock } from "../util/clock.js";

export class TokenBucket {
  readonly #ratePerMs: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #updatedAt: number;
  /** Pod key → when its reserved token is due. */
  readonly #reservations = new Map<string, number>();

  /** ratePerMinute 0 means no limit. */
  constructor(options: { ratePerMinute: number; burst: number; clock?: Clock }) {
    this.#ratePerMs = options.ratePerMinute / 60_000;
    this.#burst = options.burst;
    this.#clock = options.clock ?? systemClock;
    this.#tokens = options.burst;
    this.#updatedAt = this.#clock.now();
  }

  get unlimited(): boolean {
    return this.#ratePerMs === 0;
  }

  /**
   * 0 when the key may delete now (its token is taken); otherwise how long until its reserved token is due.
   * A key asking again before its turn keeps its place; it is never charged twice.
   */
  take(key: string): number {
    if (this.unlimited) return 0;
    const now = this.#clock.now();
    const due = this.#reservations.get(key);
    if (due !== undefined) {
      if (due > now) return due - now;
      this.#reservations.delete(key);
      return 0;
    }
    this.#refill(now);
    // Tokens may go negative: each reservation is a token borrowed from the future, in arrival order.
    this.#tokens -= 1;
    if (this.#tokens >= 0) return 0;
    const wait = Math.ceil(-this.#tokens / this.#ratePerMs);
    this.#reservations.set(key, now + wait);
    return wait;
  }

  /** The key no longer needs its reserved token (the pod healed or vanished): give it back. */
  cancel(key: string): void {
    if (!this.#reservations.delete(key)) return;
    this.#refill(this.#clock.now());
    this.#tokens = Math.min(this.#burst, this.#tokens + 1);
  }

  #refill(now: number): void {
    this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#updatedAt) * this.#ratePerMs);
    this.#updatedAt = now;
  }
}
