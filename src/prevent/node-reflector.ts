// The watch of Nodes for startup-taint management: every node (or, per node, only this one), kept as NodeFacts.
import type { Config } from "../config/config.js";
import { fieldSelector, scopeOf } from "../config/selectors.js";
import type { FactsStore } from "../informer/facts-store.js";
import { Reflector, type ReflectorObserver } from "../informer/reflector.js";
import { reflectorSettings } from "../informer/reflector-settings.js";
import type { KubeTransport } from "../kube/transport.js";
import { type NodeFacts, toNodeFacts } from "./node-facts.js";

export function nodeReflector(
  config: Config,
  transport: KubeTransport,
  store: FactsStore<NodeFacts>,
  observer: ReflectorObserver,
): Reflector<NodeFacts> {
  return new Reflector<NodeFacts>({
    ...reflectorSettings(config, transport),
    collection: "nodes",
    scope: scopeOf({
      fieldSelector: fieldSelector([], config.nodeName ? [["metadata.name", "=", config.nodeName]] : []),
    }),
    store,
    transform: toNodeFacts,
    observer,
  });
}
