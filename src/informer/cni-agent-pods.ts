// The cache of a node agent's pods (e.g. istio-cni-node): where each runs, when the kubelet says it turned Ready, and
// when this process first saw that Ready spell. What counts as "Ready long enough" is safety's rule
// (safety/cni-agents.ts, asked through safety/agent-readiness.ts), not the cache's.
import { FactsStore } from "./facts-store.js";

/** The little we keep of an agent pod. */
export type AgentFacts = {
  readonly namespace: string;
  readonly name: string;
  readonly nodeName: string | undefined;
  /**
   * When its Ready condition last turned True, by the kubelet's clock; undefined while not Ready (or going away);
   * +Infinity when Ready without a usable time.
   */
  readonly readySinceMs: number | undefined;
  /**
   * When this controller first saw the current Ready spell, on its monotonic clock (how long ago is what counts; a
   * wall clock set forward must not age it); undefined while not Ready.
   */
  readonly seenReadyAtMs: number | undefined;
};

/** The condition whose True transition tells since when an agent has been ready (the only one toAgentFacts reads). */
export const READY_CONDITION = "Ready";

export const agentKey = (facts: AgentFacts): string => `${facts.namespace}/${facts.name}`;

const sameAgent = (a: AgentFacts, b: AgentFacts): boolean =>
  a.nodeName === b.nodeName && a.readySinceMs === b.readySinceMs;

/** Raw Pod JSON to AgentFacts; never throws. */
export function toAgentFacts(pod: unknown): AgentFacts | undefined {
  const p = pod as {
    metadata?: { namespace?: unknown; name?: unknown; deletionTimestamp?: unknown };
    spec?: { nodeName?: unknown };
    status?: { phase?: unknown; conditions?: unknown };
  } | null;
  const namespace = p?.metadata?.namespace;
  const name = p?.metadata?.name;
  if (typeof namespace !== "string" || typeof name !== "string") return undefined;
  const nodeName = typeof p?.spec?.nodeName === "string" ? p.spec.nodeName : undefined;
  const terminating = p?.metadata?.deletionTimestamp !== undefined && p?.metadata?.deletionTimestamp !== null;
  let readySinceMs: number | undefined;
  if (!terminating && p?.status?.phase === "Running" && Array.isArray(p.status.conditions)) {
    for (const condition of p.status.conditions as {
      type?: unknown;
      status?: unknown;
      lastTransitionTime?: unknown;
    }[]) {
      if (condition?.type !== READY_CONDITION || condition.status !== "True") continue;
      const at = condition.lastTransitionTime;
      const ms = at instanceof Date ? at.getTime() : typeof at === "string" ? Date.parse(at) : Number.NaN;
      // Ready without a usable time: no kubelet time to go by; only our own observation counts.
      readySinceMs = Number.isFinite(ms) ? ms : Number.POSITIVE_INFINITY;
    }
  }
  return { namespace, name, nodeName, readySinceMs, seenReadyAtMs: undefined };
}

export class CniAgents {
  readonly store = new FactsStore<AgentFacts>(agentKey, sameAgent);

  /**
   * The reflector's transform: raw Pod JSON to facts stamped with when we first saw this Ready spell (kept while
   * the kubelet's Ready time stays the same, so a relist or an unrelated update does not restart it).
   */
  toFacts(pod: unknown, monotonicNowMs: number): AgentFacts | undefined {
    const facts = toAgentFacts(pod);
    if (facts?.readySinceMs === undefined) return facts;
    const previous = this.store.get(agentKey(facts));
    const sameSpell = previous?.readySinceMs === facts.readySinceMs && previous.seenReadyAtMs !== undefined;
    return { ...facts, seenReadyAtMs: sameSpell ? previous.seenReadyAtMs : monotonicNowMs };
  }

  /** The agents on one node, Ready or not. */
  *onNode(node: string): Iterable<AgentFacts> {
    for (const agent of this.store.values()) if (agent.nodeName === node) yield agent;
  }

  /** Agent pods known anywhere, Ready or not: zero means the selector may be wrong. */
  get count(): number {
    return this.store.size;
  }

  get readyCount(): number {
    let ready = 0;
    for (const agent of this.store.values()) if (agent.readySinceMs !== undefined) ready++;
    return ready;
  }
}
