// The watch of Nodes for startup-taint management: every node (or, per node, only this one), kept as NodeFacts.
import type { Config } from "../config/config.js";
import { fieldSelector, scopeOf } from "../config/selectors.js";
import type { FactsStore } from "../informer/facts-store.js";
import { PodReflector, type ReflectorObserver } from "../informer/reflector.js";
import type { KubeTransport } from "../kube/transport.js";
import { type NodeFacts, toNodeFacts } from "./node-facts.js";

export function nodeReflector(
  config: Config,
  transport: KubeTransport,
  store: FactsStore<NodeFacts>,
  observer: ReflectorObserver<NodeFacts>,
): PodReflector<NodeFacts> {
  return new PodReflector<NodeFacts>({
    transport,
    collection: "nodes",
    scope: scopeOf({
      fieldSelector: fieldSelector([], config.nodeName ? [["metadata.name", "=", config.nodeName]] : []),
    }),
    store,
    transform: toNodeFacts,
    pageSize: config.listPageSize,
    watchTimeoutMs: config.watchTimeoutMs,
    stallTimeoutMs: config.watchStallTimeoutMs,
    backoff: { baseMs: 500, maxMs: 30_000, jitter: 0.5 },
    observer,
  });
}
