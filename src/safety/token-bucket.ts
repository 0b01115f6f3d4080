// Paces deletions cluster-wide: at most `burst` at once, then `ratePerMinute`. A pod that must wait gets a
// reserved slot, so held pods wake once, at their turn, instead of all racing for each new token.
//
// Implemented as GCRA (generic cell rate algorithm): one "theoretical arrival time" stands for the bucket,
// which keeps the bound burst + rate × window exact under any mix of takes, late claims and cancels.
import { type Clock, systemClock } from "../util/clock.js";

export class TokenBucket {
  readonly #intervalMs: number;
  readonly #burst: number;
  readonly #clock: Clock;
  /** When the bucket would be full again if nothing else were taken. */
  #theoreticalArrival = Number.NEGATIVE_INFINITY;
  /** Pod key → the start of its reserved slot. */
  readonly #reservations = new Map<string, number>();

  /** ratePerMinute 0 means no limit. */
  constructor(options: { ratePerMinute: number; burst: number; clock?: Clock }) {
    this.#intervalMs = options.ratePerMinute === 0 ? 0 : 60_000 / options.ratePerMinute;
    this.#burst = options.burst;
    this.#clock = options.clock ?? systemClock;
  }

  get unlimited(): boolean {
    return this.#intervalMs === 0;
  }

  /**
   * 0 when the key may delete now (its token is spent); otherwise how long until its reserved slot.
   * A key asking again before its turn keeps its place and is never charged twice. A slot not claimed
   * within one interval lapses (it cannot be saved up), and the key asks anew.
   */
  take(key: string): number {
    if (this.unlimited) return 0;
    const now = this.#clock.now();
    const slot = this.#reservations.get(key);
    if (slot !== undefined) {
      if (now < slot) return Math.ceil(slot - now);
      this.#reservations.delete(key);
      if (now < slot + this.#intervalMs) return 0;
    }
    const arrival = Math.max(this.#theoreticalArrival, now);
    const allowedAt = arrival - (this.#burst - 1) * this.#intervalMs;
    this.#theoreticalArrival = arrival + this.#intervalMs;
    if (allowedAt <= now) return 0;
    this.#reservations.set(key, allowedAt);
    return Math.ceil(allowedAt - now);
  }

  /**
   * The key no longer needs its slot (the pod healed, vanished, or is held for another reason). Only the
   * last slot handed out is given back: earlier ones have later reservations lined up behind them.
   */
  cancel(key: string): void {
    const slot = this.#reservations.get(key);
    if (slot === undefined) return;
    this.#reservations.delete(key);
    const lastSlot = this.#theoreticalArrival - this.#burst * this.#intervalMs;
    if (Math.abs(lastSlot - slot) < 1e-6) this.#theoreticalArrival -= this.#intervalMs;
  }
}
