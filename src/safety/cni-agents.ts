// The one rule for "a node's agents have been Ready long enough", which every readiness question goes by (asked in
// agent-readiness.ts: the gate, the outage, the enrolment grace, Istio's fallback, startup taints). It fails safe: by
// default ("observed") a Ready duration counts from the later of the kubelet's timestamp and when this process first
// saw the agent Ready, so a skewed or missing timestamp can never make "Ready long enough" come early. The kubelet's
// time is on the wall clock; this process's sighting is measured on the monotonic clock, so setting the wall clock
// forward cannot make it come early either.
import type { AgentFacts, CniAgents } from "../informer/cni-agent-pods.js";
import type { Instant } from "../util/clock.js";

/**
 * Which time a Ready duration counts from. "observed" (to act): the later of the kubelet's time and this process's
 * first sight. "claimed" (a one-shot look, or telling whether an outage explains breakage): the kubelet's time when it
 * is a real past time; a missing or future one still counts from this process's first sight.
 */
export type ReadyBasis = "observed" | "claimed";

/** How long one Ready agent has been Ready; undefined while it cannot count yet (no usable time at all). */
function agentReadyForMs(agent: AgentFacts, now: Instant, basis: ReadyBasis): number | undefined {
  const kubelet = agent.readySinceMs;
  if (basis === "claimed" && kubelet !== undefined && kubelet <= now.wallMs) return now.wallMs - kubelet;
  // The later start is the shorter time: each measured on its own clock. A missing (infinite) kubelet time leaves
  // only ours, and without ours it never counts.
  const known: number[] = [];
  if (kubelet !== undefined && Number.isFinite(kubelet)) known.push(now.wallMs - kubelet);
  if (agent.seenReadyAtMs !== undefined) known.push(now.monoMs - agent.seenReadyAtMs);
  return known.length === 0 ? undefined : Math.min(...known);
}

/** How long the longest-Ready agent of the set on the node has been Ready (0 at least); undefined when none is. */
export function readyForMs(
  agents: CniAgents,
  node: string,
  now: Instant,
  basis: ReadyBasis = "observed",
): number | undefined {
  let longest: number | undefined;
  for (const agent of agents.onNode(node)) {
    if (agent.readySinceMs === undefined) continue;
    const forMs = agentReadyForMs(agent, now, basis);
    if (forMs === undefined) continue;
    longest = Math.max(longest ?? 0, forMs);
  }
  return longest === undefined ? undefined : Math.max(0, longest);
}

/**
 * Where agents stand on a node: Ready for some time, a pod there but not Ready, or no pod there. The one shape of an
 * answer about readiness, for one agent set (readyState) and for all the CNI agents a node needs (startup taints,
 * which add how long they have seen them NotReady: `NotReady`).
 */
export type ReadyState<NotReady extends object = object> =
  | { readonly kind: "ready"; readonly forMs: number }
  | ({ readonly kind: "not_ready" } & NotReady)
  | { readonly kind: "absent" };

export function readyState(agents: CniAgents, node: string, now: Instant, basis: ReadyBasis = "observed"): ReadyState {
  const forMs = readyForMs(agents, node, now, basis);
  if (forMs !== undefined) return { kind: "ready", forMs };
  for (const _ of agents.onNode(node)) return { kind: "not_ready" };
  return { kind: "absent" };
}

/**
 * The rule: how much longer an agent set Ready for `forMs` must stay Ready to have been Ready for `minReadyMs`
 * (--cni-agent-min-ready); 0 when it has. Deletes ask it per gate (agent-readiness.ts), taints for the shortest-Ready
 * set a node needs (prevent/taint-policy.ts): the aggregation is the caller's, the rule is this.
 */
export const readyWaitMs = (forMs: number, minReadyMs: number): number => Math.max(0, minReadyMs - forMs);
