// The one rule for "a node's agents have been Ready long enough", used by deletes (the node-agent gate in guards.ts)
// and by startup taints (prevent/node-agent-state.ts). It fails safe: by default ("observed") a Ready duration counts
// from the later of the kubelet's timestamp and when this process first saw the agent Ready, so a skewed or missing
// timestamp can never make "Ready long enough" come early.
import type { AgentFacts, CniAgents } from "../informer/cni-agent-pods.js";

/**
 * Which time a Ready duration counts from. "observed" (to act): the later of the kubelet's time and this process's
 * first sight. "claimed" (a one-shot look, or telling whether an outage explains breakage): the kubelet's time when it
 * is a real past time; a missing or future one still counts from this process's first sight.
 */
export type ReadyBasis = "observed" | "claimed";

function readySince(agent: AgentFacts, now: number, basis: ReadyBasis): number | undefined {
  const kubelet = agent.readySinceMs;
  if (basis === "claimed" && kubelet !== undefined && kubelet <= now) return kubelet;
  // The later of the two; a missing (infinite) kubelet time leaves only ours, and without ours it never counts.
  const known = [kubelet, agent.seenReadyAtMs].filter((t): t is number => t !== undefined && Number.isFinite(t));
  return known.length === 0 ? undefined : Math.max(...known);
}

/** How long the longest-Ready agent of the set on the node has been Ready (0 at least); undefined when none is. */
export function readyForMs(
  agents: CniAgents,
  node: string,
  now: number,
  basis: ReadyBasis = "observed",
): number | undefined {
  let longest: number | undefined;
  for (const agent of agents.onNode(node)) {
    if (agent.readySinceMs === undefined) continue;
    const since = readySince(agent, now, basis);
    if (since === undefined) continue;
    longest = Math.max(longest ?? 0, now - since);
  }
  return longest === undefined ? undefined : Math.max(0, longest);
}

/** Where one agent set stands on a node: Ready for some time, a pod there but not Ready, or no pod there. */
export type AgentSetReadiness =
  | { readonly kind: "ready"; readonly forMs: number }
  | { readonly kind: "not_ready" }
  | { readonly kind: "absent" };

export function agentSetReadiness(
  agents: CniAgents,
  node: string,
  now: number,
  basis: ReadyBasis = "observed",
): AgentSetReadiness {
  const forMs = readyForMs(agents, node, now, basis);
  if (forMs !== undefined) return { kind: "ready", forMs };
  for (const _ of agents.onNode(node)) return { kind: "not_ready" };
  return { kind: "absent" };
}

/**
 * The rule: how much longer an agent set Ready for `forMs` must stay Ready to have been Ready for `minReadyMs`
 * (--cni-agent-min-ready); 0 when it has. Deletes ask it per gate (guards.ts), taints for the shortest-Ready set a
 * node needs (prevent/taint-policy.ts): the aggregation is the caller's, the rule is this.
 */
export const readyWaitMs = (forMs: number, minReadyMs: number): number => Math.max(0, minReadyMs - forMs);
