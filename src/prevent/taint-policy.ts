// What to do with one node's startup taint now, from facts alone. Pure: the startup-taint controller gathers the
// facts, calls this, and only then writes. The one place these decisions are made (scan and explain show them).
//
//   tainted, agents Ready ≥ min-ready                 → remove the configured keys
//   tainted, agents Ready < min-ready                 → hold (agent_min_ready), look again when it is up
//   tainted, agents not Ready (or none on the node)   → hold (agent_not_ready / no_agent_pod)
//   untainted, continuous, agent NotReady ≥ after     → add key[0] NoSchedule, unless the share cap says no
//   anything else                                     → nothing to do
import type { StartupTaintConfig } from "../config/startup-taint.js";
import { type ReadyState, readyWaitMs } from "../safety/cni-agents.js";

/** The --startup-taint* settings, and how long every CNI agent on the node must have been Ready (as this controller
 * observed it; the agent gate's --cni-agent-min-ready). */
export type TaintPolicy = StartupTaintConfig & { readonly minReadyMs: number };

/**
 * The node's CNI agents (safety/agent-readiness.ts): every needed one Ready (for how long), one NotReady (for as long
 * as the judge has seen it so), or none there.
 */
export type AgentState = ReadyState<{ readonly forMs: number }>;

export type NodeTaintInput = {
  /** Configured keys the node carries now. */
  readonly present: readonly string[];
  readonly agents: AgentState;
  /** Nodes known, and nodes carrying a configured key now (including taints added earlier in this pass). */
  readonly nodes: number;
  readonly tainted: number;
};

/** Why a node's startup taint is kept (or not re-added): the `reason` label of the held-nodes gauge. */
export const TAINT_HOLD_REASONS = ["agent_not_ready", "agent_min_ready", "no_agent_pod", "share_cap"] as const;
export type TaintHoldReason = (typeof TAINT_HOLD_REASONS)[number];

export type TaintDecision =
  | { readonly kind: "remove"; readonly keys: readonly string[]; readonly detail: string }
  | { readonly kind: "add"; readonly key: string; readonly detail: string }
  | { readonly kind: "hold"; readonly reason: TaintHoldReason; readonly detail: string; readonly retryAfterMs?: number }
  | { readonly kind: "none"; readonly retryAfterMs?: number };

export const ADDED_EFFECT = "NoSchedule";

/** How many nodes may carry a configured key at once: the share, rounded down (never the whole cluster). */
export const taintCap = (nodes: number, maxShare: number): number => Math.floor(nodes * maxShare + 1e-9);

export function decideTaint(input: NodeTaintInput, policy: TaintPolicy): TaintDecision {
  const { present, agents } = input;
  if (present.length > 0) return whileTainted(present, agents, policy);
  if (policy.mode !== "continuous" || agents.kind !== "not_ready") return { kind: "none" };
  const waitMs = policy.notReadyAfterMs - agents.forMs;
  if (waitMs > 0) return { kind: "none", retryAfterMs: waitMs };
  const cap = taintCap(input.nodes, policy.maxShare);
  if (input.tainted + 1 > cap) {
    return {
      kind: "hold",
      reason: "share_cap",
      detail: `CNI agent NotReady for ${seconds(agents.forMs)}, but ${input.tainted} of ${input.nodes} nodes already carry a startup taint (at most ${cap}: --startup-taint-max-share ${policy.maxShare})`,
    };
  }
  const key = policy.keys[0] ?? "";
  return {
    kind: "add",
    key,
    detail: `CNI agent NotReady for ${seconds(agents.forMs)} (--startup-taint-not-ready-after ${seconds(policy.notReadyAfterMs)}): ${key}:${ADDED_EFFECT} added`,
  };
}

function whileTainted(present: readonly string[], agents: AgentState, policy: TaintPolicy): TaintDecision {
  const keys = present.join(", ");
  switch (agents.kind) {
    case "absent":
      return { kind: "hold", reason: "no_agent_pod", detail: `${keys} kept: no CNI agent pod on the node yet` };
    case "not_ready":
      return {
        kind: "hold",
        reason: "agent_not_ready",
        detail: `${keys} kept: the CNI agent is not Ready (for ${seconds(agents.forMs)})`,
      };
    case "ready": {
      const waitMs = readyWaitMs(agents.forMs, policy.minReadyMs);
      if (waitMs > 0) {
        return {
          kind: "hold",
          reason: "agent_min_ready",
          detail: `${keys} kept: the CNI agent has been Ready for ${seconds(agents.forMs)} of ${seconds(policy.minReadyMs)} (--cni-agent-min-ready)`,
          retryAfterMs: waitMs,
        };
      }
      return {
        kind: "remove",
        keys: present,
        detail: `CNI agent Ready for ${seconds(agents.forMs)}: ${keys} removed`,
      };
    }
  }
}

const seconds = (ms: number): string => `${Math.round(ms / 100) / 10}s`;
