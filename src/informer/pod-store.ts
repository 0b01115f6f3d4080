// The cache: compact facts per pod key, with the change each write made (for enqueueing).
import type { PodFacts } from "../detect/facts.js";
import { podKey } from "../detect/facts.js";
import { sameFacts } from "../detect/to-pod-facts.js";

export type StoreChange = {
  readonly key: string;
  readonly previous: PodFacts | undefined;
  readonly current: PodFacts | undefined;
};

export class PodStore {
  #pods = new Map<string, PodFacts>();

  get size(): number {
    return this.#pods.size;
  }

  get(key: string): PodFacts | undefined {
    return this.#pods.get(key);
  }

  values(): IterableIterator<PodFacts> {
    return this.#pods.values();
  }

  /**
   * Stores the facts. Returns the change, or undefined when nothing a verdict reads changed: the newer
   * facts are stored either way, so an action's resourceVersion precondition is always the latest seen.
   */
  upsert(facts: PodFacts): StoreChange | undefined {
    const key = podKey(facts.namespace, facts.name);
    const previous = this.#pods.get(key);
    this.#pods.set(key, facts);
    if (previous && sameFacts(previous, facts)) return undefined;
    return { key, previous, current: facts };
  }

  delete(namespace: string, name: string): StoreChange | undefined {
    const key = podKey(namespace, name);
    const previous = this.#pods.get(key);
    if (!previous) return undefined;
    this.#pods.delete(key);
    return { key, previous, current: undefined };
  }

  /** Swaps in the result of a full list at once and returns what differs: vanished, new and changed pods. */
  replaceAll(listed: Map<string, PodFacts>): StoreChange[] {
    const changes: StoreChange[] = [];
    for (const [key, previous] of this.#pods) {
      if (!listed.has(key)) changes.push({ key, previous, current: undefined });
    }
    for (const [key, current] of listed) {
      const previous = this.#pods.get(key);
      if (!previous || !sameFacts(previous, current)) changes.push({ key, previous, current });
    }
    this.#pods = listed;
    return changes;
  }
}
