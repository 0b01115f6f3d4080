// Loop protection: when the replacement of a pod we deleted comes back broken on the same node, the CNI
// problem is not the race we can fix by deleting; wait exponentially longer before each further delete.
import type { PodFacts } from "../detect/facts.js";
import { type Clock, type Instant, instantOf, systemClock } from "../util/clock.js";

/**
 * `at`: the wall time is compared with creationTimestamp (the API server's clock); how long ago is measured on the
 * monotonic clock, so a wall clock set forward cannot end a backoff early (nor one set back make it last).
 */
type Record = { readonly deletedUid: string; readonly count: number; readonly at: Instant };

export type LoopCheck = { readonly waitMs: number; readonly deletions: number; readonly lastDeletionAgoMs: number };

export class LoopBackoff {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #clock: Clock;
  /** owner UID + node → our last deletion there. */
  readonly #records = new Map<string, Record>();

  constructor(options: { baseMs: number; maxMs: number; clock?: Clock }) {
    this.#baseMs = options.baseMs;
    this.#maxMs = options.maxMs;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * For a broken pod that replaces one we deleted (same owner, same node, created after the delete): how
   * long to wait still. Undefined when this is not a repeat: no owner, first time, a sibling that was
   * already there (several replicas broken at once are not a loop), or the quiet period has passed.
   */
  check(facts: PodFacts, seenBrokenSinceMs = Number.POSITIVE_INFINITY, dry = false): LoopCheck | undefined {
    const key = keyOf(facts);
    const record = key === undefined ? undefined : this.#records.get(key);
    if (!record || record.deletedUid === facts.uid) return undefined;
    // creationTimestamp has whole seconds: a replacement made in the same second as our delete still counts.
    if (facts.createdAtMs === undefined || facts.createdAtMs < Math.floor(record.at.wallMs / 1000) * 1000)
      return undefined;
    // A sibling created in that same second was already broken before our delete: not a replacement.
    if (seenBrokenSinceMs < record.at.monoMs) return undefined;
    const agoMs = this.#agoMs(record);
    // Quiet for twice the longest backoff: the loop is over, start counting afresh.
    if (agoMs > 2 * this.#maxMs) {
      // A dry look (scan, explain) forgets nothing.
      if (!dry) this.#records.delete(key as string);
      return undefined;
    }
    const backoffMs = Math.min(this.#maxMs, this.#baseMs * 2 ** (record.count - 1));
    return { waitMs: Math.max(0, backoffMs - agoMs), deletions: record.count, lastDeletionAgoMs: agoMs };
  }

  /** Call after a successful delete. */
  recordDeletion(facts: PodFacts): void {
    const key = keyOf(facts);
    if (key === undefined) return;
    const previous = this.#records.get(key);
    const repeat = previous !== undefined && this.#agoMs(previous) <= 2 * this.#maxMs;
    this.#records.set(key, {
      deletedUid: facts.uid,
      count: repeat ? previous.count + 1 : 1,
      at: instantOf(this.#clock),
    });
    if (this.#records.size > 10_000) this.#sweep();
  }

  /** Our last deletion per owner and node, as plain data, read-only (for tests). */
  snapshot(): readonly (readonly [string, Readonly<Record>])[] {
    return [...this.#records].map(([key, record]) => [key, { ...record }]);
  }

  #sweep(): void {
    for (const [key, record] of this.#records) if (this.#agoMs(record) > 2 * this.#maxMs) this.#records.delete(key);
  }

  #agoMs(record: Record): number {
    return this.#clock.monotonic() - record.at.monoMs;
  }
}

const keyOf = (facts: PodFacts): string | undefined =>
  facts.owner === undefined ? undefined : `${facts.owner.uid}/${facts.nodeName ?? ""}`;
