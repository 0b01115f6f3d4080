// Counts pods we deleted that are still terminating, per node and namespace, to cap how many are down at once.
import type { PodFacts } from "../detect/facts.js";

export type InflightHold = "node_inflight" | "namespace_inflight";

type Slot = { readonly node: string; readonly namespace: string };

/** In-flight deletions a node and a namespace each take now (Infinity without a cap). */
export type FreeSlots = { readonly node: number; readonly namespace: number };

export class InflightDeletions {
  readonly #perNode: number;
  readonly #perNamespace: number;
  /** Pod UID → where its slot is counted. */
  readonly #slots = new Map<string, Slot>();
  readonly #byNode = new Map<string, number>();
  readonly #byNamespace = new Map<string, number>();

  /** A limit of 0 is no limit. */
  constructor(limits: { perNode: number; perNamespace: number }) {
    this.#perNode = limits.perNode;
    this.#perNamespace = limits.perNamespace;
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Every slot by pod UID, as plain data, read-only (for tests; the counts follow from it). */
  snapshot(): readonly (readonly [string, Slot])[] {
    return [...this.#slots].map(([uid, slot]) => [uid, { ...slot }]);
  }

  /** Which cap, if any, a new deletion of this pod would exceed. */
  blockedBy(facts: PodFacts): InflightHold | undefined {
    const node = facts.nodeName ?? "";
    if (this.#perNode > 0 && (this.#byNode.get(node) ?? 0) >= this.#perNode) return "node_inflight";
    if (this.#perNamespace > 0 && (this.#byNamespace.get(facts.namespace) ?? 0) >= this.#perNamespace) {
      return "namespace_inflight";
    }
    return undefined;
  }

  /** How many more deletions the node and the namespace each take now (Infinity without a cap). */
  free(where: Slot): FreeSlots {
    const left = (cap: number, used: number) => (cap > 0 ? Math.max(0, cap - used) : Number.POSITIVE_INFINITY);
    return {
      node: left(this.#perNode, this.#byNode.get(where.node) ?? 0),
      namespace: left(this.#perNamespace, this.#byNamespace.get(where.namespace) ?? 0),
    };
  }

  /** Takes a slot before the DELETE is sent, so concurrent workers cannot overshoot the cap. */
  reserve(facts: PodFacts): void {
    if (this.#slots.has(facts.uid)) return;
    const slot = { node: facts.nodeName ?? "", namespace: facts.namespace };
    this.#slots.set(facts.uid, slot);
    bump(this.#byNode, slot.node, 1);
    bump(this.#byNamespace, slot.namespace, 1);
  }

  /** The pod is gone (or the DELETE did not happen): returns the freed slot, if there was one. */
  release(uid: string): Slot | undefined {
    const slot = this.#slots.get(uid);
    if (!slot) return undefined;
    this.#slots.delete(uid);
    bump(this.#byNode, slot.node, -1);
    bump(this.#byNamespace, slot.namespace, -1);
    return slot;
  }
}

function bump(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
