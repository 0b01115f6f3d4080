// Paces deletions cluster-wide: at most `burst` at once, then `ratePerMinute`. A pod that must wait gets a
// reserved slot, so held pods wake once, at their turn, instead of all racing for each new token.
//
// Implemented as GCRA (generic cell rate algorithm): one "theoretical arrival time" stands for the bucket,
// which keeps the bound burst + rate × window exact under any mix of takes, late claims and cancels. Every time in
// here is on the monotonic clock: a wall clock set forward must not refill the bucket at once.
import { type Clock, systemClock } from "../util/clock.js";

/**
 * One take that moved the schedule, kept while a refund may still have to replay the schedule without an
 * earlier take. `before` is the theoretical arrival just before it, `slot` its cell (the time it was allowed).
 */
type Take = {
  readonly key: string;
  readonly at: number;
  before: number;
  slot: number;
  /** granted at once; reserved and waiting; claimed (at `claimedAt`); dropped (cancelled or lapsed, still weighs). */
  state: "granted" | "reserved" | "claimed" | "dropped";
  claimedAt?: number;
};

export type TokenBucketSnapshot = {
  readonly theoreticalArrival: number;
  readonly reservations: readonly (readonly [string, number])[];
  readonly spent: readonly (readonly [
    string,
    { readonly take: Readonly<Take> | undefined; readonly refundableUntil: number },
  ])[];
  readonly ledger: readonly Readonly<Take>[];
};

export class TokenBucket {
  readonly #intervalMs: number;
  readonly #burst: number;
  readonly #clock: Clock;
  /** When the bucket would be full again if nothing else were taken. */
  #theoreticalArrival = Number.NEGATIVE_INFINITY;
  /** Pod key → the start of its reserved slot. */
  readonly #reservations = new Map<string, number>();
  /** Pod key → the cell its last token came from, until the delete settles (kept or refunded). */
  readonly #spent = new Map<string, { readonly take: Take | undefined; readonly refundableUntil: number }>();
  /** Takes in order, from the oldest that a refund could still replay. */
  #ledger: Take[] = [];

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
    const now = this.#clock.monotonic();
    const slot = this.#reservations.get(key);
    if (slot !== undefined) {
      if (now < slot) return Math.ceil(slot - now);
      this.#reservations.delete(key);
      if (now < slot + this.#intervalMs) return this.#claimLate(key, slot, now);
      this.#setState(key, "reserved", "dropped");
    }
    this.#prune(now);
    const before = this.#theoreticalArrival;
    const arrival = Math.max(before, now);
    const allowedAt = arrival - (this.#burst - 1) * this.#intervalMs;
    this.#theoreticalArrival = arrival + this.#intervalMs;
    const take: Take = { key, at: now, before, slot: allowedAt, state: allowedAt <= now ? "granted" : "reserved" };
    this.#ledger.push(take);
    if (take.state === "granted") return this.#spend(key, allowedAt, take);
    this.#reservations.set(key, allowedAt);
    return Math.ceil(allowedAt - now);
  }

  /** What take(key) would answer now, changing nothing: the policy's view of the pace. */
  peek(key: string): number {
    if (this.unlimited) return 0;
    const now = this.#clock.monotonic();
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
   * The key's delete did not happen (404, 409): the schedule becomes the one without that take, replayed from
   * just before it over the takes since (each at the time it was made, a late claim still moved as late), so
   * reservations may move earlier; returns the keys whose slot moved with their new waits, so their holders can
   * be woken sooner. Subtracting one interval instead would be wrong when the refunded take found the bucket
   * already refilled: the takes after it were not delayed by a whole interval (burst 2, 30/min: three deletes
   * in 752 ms). Only while the bucket has not filled up since the take (its cell still weighs on the schedule):
   * later, the refill has already given the token back. A DELETE's round trip is far shorter than that.
   * Why a ledger and not a plain cancel (give the cell back only when it is the last one handed out, as cancel()
   * does): that is as safe, but the pods already waiting would keep their turns, and after a 404 or 409 in a wave
   * they are exactly the ones to move up (docs/operations.md; guards.test.ts); moving them by a fixed interval
   * instead overshoots, as above, so their takes must be replayed.
   */
  refund(key: string): Map<string, number> {
    const moved = new Map<string, number>();
    const spent = this.#spent.get(key);
    this.#spent.delete(key);
    const now = this.#clock.monotonic();
    if (spent?.take === undefined || this.unlimited || now >= spent.refundableUntil) return moved;
    const index = this.#ledger.indexOf(spent.take);
    if (index < 0) return moved;
    const later = this.#ledger.slice(index + 1);
    const replayed = this.#replay(spent.take.before, later);
    // The replay can only come out later than today's schedule when takes were moved out of order; then the
    // safe choice is to keep the schedule as it is.
    if (replayed.arrival > this.#theoreticalArrival) return moved;
    this.#ledger.splice(index, 1);
    this.#theoreticalArrival = replayed.arrival;
    later.forEach((take, i) => {
      const { before, slot } = replayed.takes[i] as { before: number; slot: number };
      take.before = before;
      take.slot = slot;
      if (take.state === "reserved" && this.#reservations.get(take.key) !== slot) {
        this.#reservations.set(take.key, slot);
        moved.set(take.key, Math.max(0, Math.ceil(slot - now)));
      }
    });
    return moved;
  }

  /** The schedule from `arrival` over `takes`, as take() and #claimLate() would have made it. */
  #replay(arrival: number, takes: readonly Take[]): { arrival: number; takes: { before: number; slot: number }[] } {
    const replayed: { before: number; slot: number }[] = [];
    let theoretical = arrival;
    for (const take of takes) {
      const before = theoretical;
      const at = Math.max(theoretical, take.at);
      const slot = at - (this.#burst - 1) * this.#intervalMs;
      theoretical = at + this.#intervalMs;
      if (take.state === "claimed" && take.claimedAt !== undefined) {
        theoretical += Math.max(0, take.claimedAt - Math.ceil(slot));
      }
      replayed.push({ before, slot });
    }
    return { arrival: theoretical, takes: replayed };
  }

  /**
   * Starts with no burst left (a new leader: the previous one may have spent it within the last minute, and
   * nothing tells us how much). The first token comes one interval from now, then the pace.
   */
  empty(): void {
    if (this.unlimited) return;
    this.#reservations.clear();
    this.#spent.clear();
    this.#ledger = [];
    this.#theoreticalArrival = this.#clock.monotonic() + this.#burst * this.#intervalMs;
  }

  /** The whole state as plain data, read-only (tests compare it before and after a dry judgement). */
  snapshot(): TokenBucketSnapshot {
    return {
      theoreticalArrival: this.#theoreticalArrival,
      reservations: [...this.#reservations],
      spent: [...this.#spent].map(([key, spent]) => [key, { ...spent, take: spent.take && { ...spent.take } }]),
      ledger: this.#ledger.map((take) => ({ ...take })),
    };
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
      for (const take of this.#ledger) {
        if (take.slot > slot) {
          take.slot += late;
          take.before += late;
        }
      }
      this.#theoreticalArrival += late;
    }
    const take = this.#setState(key, "reserved", "claimed");
    if (take) take.claimedAt = now;
    return this.#spend(key, now, take);
  }

  /** The key's latest take in state `from`, now in state `to`. */
  #setState(key: string, from: Take["state"], to: Take["state"]): Take | undefined {
    const take = this.#ledger.findLast((candidate) => candidate.key === key && candidate.state === from);
    if (take) take.state = to;
    return take;
  }

  /**
   * Forgets takes that no refund can reach any more: a take is refundable until its cell + burst × interval, and
   * its cell is at most one interval before it was claimed, and a reservation lapses one interval after its
   * slot. Slots only grow along the ledger, so a prefix goes.
   */
  #prune(now: number): void {
    const horizon = now - (this.#burst + 2) * this.#intervalMs;
    const keep = this.#ledger.findIndex((take) => Math.max(take.at, take.slot, take.claimedAt ?? take.at) >= horizon);
    this.#ledger = keep < 0 ? [] : this.#ledger.slice(Math.max(keep, this.#ledger.length - 10_000));
  }

  #spend(key: string, cell: number, take: Take | undefined): 0 {
    // Right after the take that spent `cell`, the bucket is full again at cell + burst × interval at the earliest.
    this.#spent.set(key, { take, refundableUntil: cell + this.#burst * this.#intervalMs });
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
    const take = this.#setState(key, "reserved", "dropped");
    if (Math.abs(lastSlot - slot) < 1e-6) {
      this.#theoreticalArrival -= this.#intervalMs;
      if (take && this.#ledger.at(-1) === take) this.#ledger.pop();
    }
  }
}
