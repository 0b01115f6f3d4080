// The pod cache: compact PodFacts by namespace/name, indexed by namespace (a namespace's labels change: its pods
// are found without a scan of every pod, as client-go's cache.NamespaceIndex does).
import type { PodFacts } from "../detect/facts.js";
import { podKey } from "../detect/facts.js";
import { sameFacts } from "../detect/to-pod-facts.js";
import { FactsStore, type StoreChange } from "./facts-store.js";

export type PodChange = StoreChange<PodFacts>;

export class PodStore extends FactsStore<PodFacts> {
  /** Namespace → the keys of its pods in the store. */
  readonly #byNamespace = new Map<string, Set<string>>();

  constructor() {
    super((facts) => podKey(facts.namespace, facts.name), sameFacts);
  }

  /** The pods of one namespace now. */
  *inNamespace(namespace: string): IterableIterator<PodFacts> {
    for (const key of this.#byNamespace.get(namespace) ?? []) {
      const facts = this.get(key);
      if (facts) yield facts;
    }
  }

  override upsert(facts: PodFacts): PodChange | undefined {
    this.#index(this.keyOf(facts), facts.namespace);
    return super.upsert(facts);
  }

  override remove(key: string): PodChange | undefined {
    const change = super.remove(key);
    if (change?.previous) this.#unindex(key, change.previous.namespace);
    return change;
  }

  override replaceAll(listed: Map<string, PodFacts>): PodChange[] {
    this.#byNamespace.clear();
    for (const [key, facts] of listed) this.#index(key, facts.namespace);
    return super.replaceAll(listed);
  }

  #index(key: string, namespace: string): void {
    const keys = this.#byNamespace.get(namespace);
    if (keys) keys.add(key);
    else this.#byNamespace.set(namespace, new Set([key]));
  }

  #unindex(key: string, namespace: string): void {
    const keys = this.#byNamespace.get(namespace);
    keys?.delete(key);
    if (keys?.size === 0) this.#byNamespace.delete(namespace);
  }
}
