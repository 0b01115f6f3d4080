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
  /** Pod key → the cell its last token came from, until the delete settles (kept or refunded). */
  readonly #spent = new Map<string, { readonly cell: number; readonly refundableUntil: number }>();

  readonly #options: { ratePerMinute: number; burst: number; clock?: Clock };

  /** ratePerMinute 0 means no limit. */
  constructor(options: { ratePerMinute: number; burst: number; clock?: Clock }) {
    this.#options = options;
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
      if (now < slot + this.#intervalMs) return this.#claimLate(key, slot, now);
    }
    const arrival = Math.max(this.#theoreticalArrival, now);
    const allowedAt = arrival - (this.#burst - 1) * this.#intervalMs;
    this.#theoreticalArrival = arrival + this.#intervalMs;
    if (allowedAt <= now) return this.#spend(key, allowedAt);
    this.#reservations.set(key, allowedAt);
    return Math.ceil(allowedAt - now);
  }

  /** What take(key) would answer now, changing nothing: the policy's view of the pace. */
  peek(key: string): number {
    if (this.unlimited) return 0;
    const now = this.#clock.now();
    const slot = this.#reservations.get(key);
    if (slot !== undefined && now < slot + this.#intervalMs) return Math.max(0, Math.ceil(slot - now));
    const allowedAt = Math.max(this.#theoreticalArrival, now) - (this.#burst - 1) * this.#intervalMs;
    return Math.max(0, Math.ceil(allowedAt - now));
  }

  /** The key's delete happened: its token stays spent. */
  settle(key: string): void {
    this.#spent.delete(key);
  }

  /**
   * The key's delete did not happen (404, 409): its cell is given back as if it had never been taken. Every
   * reservation after that cell moves one interval earlier; returns those keys with their new waits, so their
   * holders can be woken sooner: the schedule becomes exactly the one without the refunded take. That holds only
   * while the bucket has not filled up since the take (its cell still weighs on the schedule): later, the refill
   * has already given the token back, and refunding again would let a burst through twice. A DELETE's round trip
   * is far shorter than that.
   */
  refund(key: string): Map<string, number> {
    const moved = new Map<string, number>();
    const spent = this.#spent.get(key);
    this.#spent.delete(key);
    const now = this.#clock.now();
    if (spent === undefined || this.unlimited || now >= spent.refundableUntil) return moved;
    const { cell } = spent;
    for (const [waiting, slot] of this.#reservations) {
      if (slot <= cell) continue;
      const earlier = slot - this.#intervalMs;
      this.#reservations.set(waiting, earlier);
      moved.set(waiting, Math.max(0, Math.ceil(earlier - now)));
    }
    this.#theoreticalArrival -= this.#intervalMs;
    return moved;
  }

  /**
   * Starts with no burst left (a new leader: the previous one may have spent it within the last minute, and
   * nothing tells us how much). The first token comes one interval from now, then the pace.
   */
  empty(): void {
    if (this.unlimited) return;
    this.#reservations.clear();
    this.#spent.clear();
    this.#theoreticalArrival = this.#clock.now() + this.#burst * this.#intervalMs;
  }

  /** A copy with the same state, for answering "what if" (scan) without spending real tokens. */
  copy(): TokenBucket {
    const twin = new TokenBucket(this.#options);
    twin.#theoreticalArrival = this.#theoreticalArrival;
    for (const [key, slot] of this.#reservations) twin.#reservations.set(key, slot);
    return twin;
  }

  /**
   * A reserved slot claimed `now`, at or after its start (timers fire late, the queue may be busy). The delete
   * happens now, not at the slot, so everything lined up behind it moves as late: otherwise the next holder,
   * on time, would delete less than one interval after this one, and the bound would hold only on paper.
   */
  #claimLate(key: string, slot: number, now: number): 0 {
    // Waits are whole milliseconds, rounded up: a holder back at the rounded-up time is on time.
    const late = now - Math.ceil(slot);
    if (late > 0) {
      for (const [waiting, at] of this.#reservations) if (at > slot) this.#reservations.set(waiting, at + late);
      this.#theoreticalArrival += late;
    }
    return this.#spend(key, now);
  }

  #spend(key: string, cell: number): 0 {
    // Right after the take that spent `cell`, the bucket is full again at cell + burst × interval at the earliest.
    this.#spent.set(key, { cell, refundableUntil: cell + this.#burst * this.#intervalMs });
    // Deletes that never settle (a crash between take and settle cannot happen here, but a caller may forget):
    // keep the map bounded rather than grow with every delete.
    if (this.#spent.size > 10_000) this.#spent.delete(this.#spent.keys().next().value as string);
    return 0;
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
