// The agents' readiness as compose builds it, for tests: one rule's CNI agent gate over the agents given.
import type { CniAgents } from "../../src/informer/cni-agent-pods.js";
import type { NodeAgentGate } from "../../src/informer/node-agent-watcher.js";
import { AgentReadiness, type AgentReadinessOptions } from "../../src/safety/agent-readiness.js";

/** The CNI agent gate the pipeline builds for a rule with --cni-agent-selector. */
export const cniAgentGate = (agents: CniAgents, minReadyMs: number): NodeAgentGate => ({
  agents,
  reason: "cni_agent_not_ready",
  what: "CNI agent",
  selectorFlag: "--cni-agent-selector",
  minReadyMs,
});

/** The readiness of the rule's CNI agents (the istio rule by default): what the guards and startup taints ask. */
export const cniReadiness = (
  agents: CniAgents,
  minReadyMs: number,
  options: Omit<AgentReadinessOptions, "gatesByRule"> & { readonly rule?: string } = {},
): AgentReadiness =>
  new AgentReadiness({
    ...options,
    gatesByRule: new Map([[options.rule ?? "istio", [cniAgentGate(agents, minReadyMs)]]]),
  });
