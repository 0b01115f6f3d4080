// The CNI node agents (e.g. istio-cni-node): which nodes have one that is Ready, and since when.
import { FactsStore } from "../informer/facts-store.js";

/** The little we keep of an agent pod. */
export type AgentFacts = {
  readonly namespace: string;
  readonly name: string;
  readonly nodeName: string | undefined;
  /** When its Ready condition last turned True; undefined while not Ready (or going away). */
  readonly readySinceMs: number | undefined;
};

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
      if (condition?.type !== "Ready" || condition.status !== "True") continue;
      const at = condition.lastTransitionTime;
      const ms = at instanceof Date ? at.getTime() : typeof at === "string" ? Date.parse(at) : Number.NaN;
      // Ready without a usable time: count it as Ready since the epoch rather than never.
      readySinceMs = Number.isFinite(ms) ? ms : 0;
    }
  }
  return { namespace, name, nodeName, readySinceMs };
}

export class CniAgents {
  readonly store = new FactsStore<AgentFacts>(agentKey, sameAgent);

  /** How long the longest-Ready agent on the node has been Ready; undefined when none is. */
  readyForMs(node: string, now: number): number | undefined {
    let earliest: number | undefined;
    for (const agent of this.store.values()) {
      if (agent.nodeName !== node || agent.readySinceMs === undefined) continue;
      earliest = earliest === undefined ? agent.readySinceMs : Math.min(earliest, agent.readySinceMs);
    }
    return earliest === undefined ? undefined : Math.max(0, now - earliest);
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
