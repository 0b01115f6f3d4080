// Broken pods we are deliberately not repairing right now, and why: the pods_held gauge and holds_total.
import type { PodFacts } from "../detect/facts.js";
import { GaugedMap } from "../observe/gauged-map.js";
import type { LabelledCounter, LabelledGauge, ScrapedSeries } from "../observe/metrics.js";
import { HOLD_REASONS, type HoldReason } from "./hold-reasons.js";

type Held = {
  readonly uid: string;
  readonly reason: HoldReason;
  readonly node: string;
  readonly namespace: string;
  /** When this pod UID was first held for this reason, on the monotonic clock. */
  readonly sinceMs: number;
};

export type HoldsAge = {
  /** cni_repair_pods_held_longest_seconds, read at scrape time from these holds. */
  readonly longest: ScrapedSeries<{ reason: string }>;
  /** The monotonic clock, in milliseconds. */
  readonly monotonicMs: () => number;
};

export class Holds {
  readonly #held: GaugedMap<Held, { reason: string }>;
  readonly #monotonicMs: () => number;

  constructor(gauge: LabelledGauge<{ reason: string }>, total: LabelledCounter<{ reason: string }>, age?: HoldsAge) {
    this.#held = new GaugedMap(gauge, total, (held) => ({ reason: held.reason }));
    this.#monotonicMs = age?.monotonicMs ?? (() => 0);
    // Every reason's series exists from the start, so alerts and rate() see them before the first hold.
    for (const reason of HOLD_REASONS) {
      gauge.inc({ reason }, 0);
      total.inc({ reason }, 0);
    }
    age?.longest.readFrom(() => HOLD_REASONS.map((reason) => [{ reason }, this.longestSeconds(reason)] as const));
  }

  /** How long the longest-held pod now held for the reason has been held for it, in seconds (0: none). */
  longestSeconds(reason: HoldReason): number {
    const nowMs = this.#monotonicMs();
    let longestMs = 0;
    for (const held of this.#held.entries()) {
      if (held[1].reason === reason) longestMs = Math.max(longestMs, nowMs - held[1].sinceMs);
    }
    return longestMs / 1000;
  }

  /** Records the hold; returns true when it is new for this pod UID (a new reason, or newly held). */
  hold(key: string, facts: PodFacts, reason: HoldReason): boolean {
    const existing = this.#held.get(key);
    if (existing?.uid === facts.uid && existing.reason === reason) return false;
    const held = {
      uid: facts.uid,
      reason,
      node: facts.nodeName ?? "",
      namespace: facts.namespace,
      sinceMs: this.#monotonicMs(),
    };
    this.#held.set(key, held, { arrival: true });
    return true;
  }

  /** The pod is acted on, healthy, or gone. Returns the reason it was held for, if it was. */
  release(key: string): HoldReason | undefined {
    return this.#held.delete(key)?.reason;
  }

  /** Every hold, as plain data, read-only (for tests). */
  snapshot(): readonly (readonly [string, Held])[] {
    return [...this.#held.entries()].map(([key, held]) => [key, { ...held }]);
  }

  /** Where the pod is held and why, if it is. */
  get(key: string): Readonly<Held> | undefined {
    return this.#held.get(key);
  }

  /**
   * Keys held for one of the reasons, optionally only on one node or in one namespace; with `first`, only that
   * many, in the order they were held.
   */
  keys(
    reasons: readonly HoldReason[],
    where: { node?: string; namespace?: string } = {},
    first = Number.POSITIVE_INFINITY,
  ): string[] {
    const keys: string[] = [];
    for (const [key, held] of this.#held.entries()) {
      if (keys.length >= first) break;
      if (!reasons.includes(held.reason)) continue;
      if (where.node !== undefined && held.node !== where.node) continue;
      if (where.namespace !== undefined && held.namespace !== where.namespace) continue;
      keys.push(key);
    }
    return keys;
  }
}
