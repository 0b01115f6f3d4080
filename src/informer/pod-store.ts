// The pod cache: compact PodFacts by namespace/name.
import type { PodFacts } from "../detect/facts.js";
import { podKey } from "../detect/facts.js";
import { sameFacts } from "../detect/to-pod-facts.js";
import { FactsStore, type StoreChange } from "./facts-store.js";

export type PodChange = StoreChange<PodFacts>;

export class PodStore extends FactsStore<PodFacts> {
  constructor() {
    super((facts) => podKey(facts.namespace, facts.name), sameFacts);
  }
}
