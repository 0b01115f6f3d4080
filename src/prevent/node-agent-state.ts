// The CNI agents a node needs, summed up for the taint policy: all Ready (for the shortest time any has been,
// by this controller's own observation, as the readiness gate counts it), one there but not Ready, or none there.
import type { CniAgents } from "../informer/cni-agent-pods.js";
import { agentSetReadiness, type ReadyBasis } from "../safety/cni-agents.js";
import type { Instant } from "../util/clock.js";

export type AgentPresence =
  | { readonly kind: "ready"; readonly forMs: number }
  | { readonly kind: "not_ready" }
  | { readonly kind: "absent" };

/** basis: "observed" to act (the gate's fail-safe rule); "claimed" (the kubelet's time) for a one-shot look. */
export function agentPresence(
  sets: readonly CniAgents[],
  node: string,
  now: Instant,
  basis: ReadyBasis = "observed",
): AgentPresence {
  let shortest = Number.POSITIVE_INFINITY;
  let absent = false;
  for (const agents of sets) {
    const readiness = agentSetReadiness(agents, node, now, basis);
    if (readiness.kind === "ready") shortest = Math.min(shortest, readiness.forMs);
    else if (readiness.kind === "not_ready") return readiness;
    else absent = true;
  }
  if (absent || sets.length === 0) return { kind: "absent" };
  return { kind: "ready", forMs: shortest };
}
