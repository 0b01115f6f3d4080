// What puts which node keys on the startup-taint controller's queue, declared in one place as the pod side's
// (controller/triggers.ts): each trigger maps one change to the nodes to judge again.
import type { Request } from "../controller/controller.js";
import { now, type Source, type Trigger, watches } from "../controller/watches.js";
import type { AgentFacts } from "../informer/cni-agent-pods.js";
import type { StoreChange } from "../informer/facts-store.js";
import type { NodeChange } from "../informer/node-cache.js";
import { startupKeysOn } from "../informer/node-facts.js";
import type { TaintJudge } from "./taint-judge.js";

export type TaintTriggerSources = {
  /** The node cache's changes. */
  readonly nodes: Source<NodeChange>;
  /** The CNI agent caches (the same ones the taints wait for). */
  readonly agents: readonly Source<StoreChange<AgentFacts>>[];
};

export type TaintTriggerLookups = {
  /** The managed keys. */
  readonly keys: readonly string[];
  /** Which nodes are held and why. */
  readonly judge: Pick<TaintJudge, "heldFor">;
  /** Whether a node is known (an agent on a node not watched wakes nothing). */
  readonly nodes: { get(name: string): unknown };
};

export function taintTriggers(sources: TaintTriggerSources, lookups: TaintTriggerLookups): readonly Trigger[] {
  const { keys, judge, nodes } = lookups;
  const tainted = (change: NodeChange["previous"]) => startupKeysOn(change?.taints, keys).length > 0;
  return [
    watches("node changed → that node", sources.nodes, (change) => [{ key: change.key }]),
    // A taint gone frees a place under the share cap: the nodes it held back are judged again.
    watches("node untainted → nodes held by the share cap", sources.nodes, (change): Request[] =>
      tainted(change.previous) && !tainted(change.current) ? now(judge.heldFor("share_cap")) : [],
    ),
    ...sources.agents.map((agents) =>
      watches("CNI agent changed → its node", agents, (change): Request[] => {
        const node = change.current?.nodeName ?? change.previous?.nodeName;
        return node !== undefined && nodes.get(node) ? [{ key: node }] : [];
      }),
    ),
  ];
}
