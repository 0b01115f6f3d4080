// What run does with a node's startup taint now, judged from the caches (nodes, agents) and the writes not seen yet:
// the one judgement the reconciler acts on and scan and explain show. A real judgement (the reconciler's) remembers
// what it saw: since when the node's agent has been NotReady (continuous mode counts from there) and why the taint
// is held (the held-nodes gauge, and the nodes a freed place under the share cap wakes). A dry look (scan, explain,
// the gauges) changes nothing.
import type { NodeCache } from "../informer/node-cache.js";
import { type NodeFacts, startupKeysOn } from "../informer/node-facts.js";
import type { AgentReadiness } from "../safety/agent-readiness.js";
import type { ReadyBasis } from "../safety/cni-agents.js";
import { type Clock, type Instant, instantOf } from "../util/clock.js";
import type { TaintExpectations } from "./taint-expectations.js";
import {
  type AgentState,
  decideTaint,
  type TaintDecision,
  type TaintHoldReason,
  type TaintPolicy,
} from "./taint-policy.js";

/** What scan and explain show of a node. */
export type NodeTaintView = {
  readonly node: string;
  readonly present: readonly string[];
  readonly decision: TaintDecision;
};

/** A node judged: the facts it was judged on (their resourceVersion is what a write tests), and what to do. */
export type TaintJudgement = NodeTaintView & {
  readonly facts: NodeFacts;
  readonly agents: AgentState;
  readonly now: Instant;
};

export type TaintJudgeOptions = {
  readonly policy: TaintPolicy;
  readonly nodes: NodeCache;
  /** Where a node's CNI agents stand (every one must be Ready before its taint goes). */
  readonly readiness: Pick<AgentReadiness, "cniAgentsOn">;
  readonly expectations: TaintExpectations;
  readonly clock: Clock;
};

export class TaintJudge {
  readonly #options: TaintJudgeOptions;
  /**
   * Node → when a real judgement first saw one of its agents NotReady, on the monotonic clock: a wall clock set
   * forward must not make an agent look NotReady for long at once.
   */
  readonly #notReadySince = new Map<string, number>();
  /** Node → why its taint is held now. */
  readonly #held = new Map<string, TaintHoldReason>();

  constructor(options: TaintJudgeOptions) {
    this.#options = options;
  }

  /**
   * The node judged now; undefined when it is not in the cache. `dry` remembers nothing. A one-shot command (scan)
   * has only just seen the agents, so it goes by the kubelet's Ready time ("claimed"): what a controller that has
   * been watching would do.
   */
  judge(node: string, { basis = "observed", dry = false }: { basis?: ReadyBasis; dry?: boolean } = {}) {
    const { nodes, policy, expectations, clock } = this.#options;
    const facts = nodes.store.get(node);
    if (!facts) return undefined;
    const now = instantOf(clock);
    const present = startupKeysOn(facts.taints, policy.keys);
    const agents = this.#agents(node, now, basis, dry);
    // A taint added and not delivered yet counts already: the cap must not be judged on a count it has outgrown.
    const tainted = nodes.tainted + expectations.pendingAdds();
    const decision = decideTaint({ present, agents, nodes: nodes.store.size, tainted }, policy);
    if (!dry) {
      if (decision.kind === "hold") this.#held.set(node, decision.reason);
      else this.#held.delete(node);
    }
    const judgement: TaintJudgement = { node, present, decision, facts, agents, now };
    return judgement;
  }

  /** What run would do with the node now, without remembering anything (scan, explain). */
  view(node: string, basis: ReadyBasis = "observed"): NodeTaintView | undefined {
    const judged = this.judge(node, { basis, dry: true });
    return judged && { node, present: judged.present, decision: judged.decision };
  }

  /** The nodes that carry a managed key, or would get one now, with what happens to them and why (scan). */
  views(basis: ReadyBasis = "observed"): NodeTaintView[] {
    const views: NodeTaintView[] = [];
    for (const facts of this.#options.nodes.store.values()) {
      const view = this.view(facts.name, basis);
      if (view && (view.present.length > 0 || view.decision.kind !== "none")) views.push(view);
    }
    return views.sort((a, b) => a.node.localeCompare(b.node));
  }

  /** Nodes whose taint is held now for this reason. */
  heldFor(reason: TaintHoldReason): string[] {
    const nodes: string[] = [];
    for (const [node, held] of this.#held) if (held === reason) nodes.push(node);
    return nodes;
  }

  /** The node is gone: nothing is remembered of it. */
  forget(node: string): void {
    this.#notReadySince.delete(node);
    this.#held.delete(node);
  }

  #agents(node: string, now: Instant, basis: ReadyBasis, dry: boolean): AgentState {
    const presence = this.#options.readiness.cniAgentsOn(node, basis, now);
    if (presence.kind !== "not_ready") {
      if (!dry) this.#notReadySince.delete(node);
      return presence;
    }
    const since = this.#notReadySince.get(node) ?? now.monoMs;
    if (!dry) this.#notReadySince.set(node, since);
    return { kind: "not_ready", forMs: now.monoMs - since };
  }
}
