// Broken pods we are deliberately not repairing right now, and why: the pods_held gauge and holds_total.
import type { PodFacts } from "../detect/facts.js";
import { GaugedMap } from "../observe/gauged-map.js";
import type { LabelledCounter, LabelledGauge } from "../observe/metrics.js";
import { HOLD_REASONS, type HoldReason } from "./hold-reasons.js";

type Held = { readonly uid: string; readonly reason: HoldReason; readonly node: string; readonly namespace: string };

export class Holds {
  readonly #held: GaugedMap<Held, { reason: string }>;

  constructor(gauge: LabelledGauge<{ reason: string }>, total: LabelledCounter<{ reason: string }>) {
    this.#held = new GaugedMap(gauge, total, (held) => ({ reason: held.reason }));
    // Every reason's series exists from the start, so alerts and rate() see them before the first hold.
    for (const reason of HOLD_REASONS) {
      gauge.inc({ reason }, 0);
      total.inc({ reason }, 0);
    }
  }

  /** Records the hold; returns true when it is new for this pod UID (a new reason, or newly held). */
  hold(key: string, facts: PodFacts, reason: HoldReason): boolean {
    const existing = this.#held.get(key);
    if (existing?.uid === facts.uid && existing.reason === reason) return false;
    const held = { uid: facts.uid, reason, node: facts.nodeName ?? "", namespace: facts.namespace };
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

  /** Keys held for one of the reasons, optionally only on one node or in one namespace. */
  keys(reasons: readonly HoldReason[], where: { node?: string; namespace?: string } = {}): string[] {
    const keys: string[] = [];
    for (const [key, held] of this.#held.entries()) {
      if (!reasons.includes(held.reason)) continue;
      if (where.node !== undefined && held.node !== where.node) continue;
      if (where.namespace !== undefined && held.namespace !== where.namespace) continue;
      keys.push(key);
    }
    return keys;
  }
}
