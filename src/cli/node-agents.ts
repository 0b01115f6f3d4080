// The node agents deletions wait for (the mesh's CNI agent; ztunnel for ambient): one cache and reflector per
// distinct selector, and the gates each rule checks.
import type { Config } from "../config/config.js";
import { fieldSelector, scopeOf } from "../config/selectors.js";
import { isAmbient, type Rule } from "../detect/rule.js";
import { PodReflector, type ReflectorObserver } from "../informer/reflector.js";
import type { KubeTransport } from "../kube/transport.js";
import { type AgentFacts, CniAgents } from "../safety/cni-agents.js";
import type { NodeAgentGate } from "../safety/guards.js";

export type NodeAgents = {
  readonly gatesByRule: ReadonlyMap<string, readonly NodeAgentGate[]>;
  readonly reflectors: readonly PodReflector<AgentFacts>[];
};

type AgentSpec = Omit<NodeAgentGate, "agents" | "minReadyMs"> & {
  readonly selector: string;
  readonly namespace: string | undefined;
};

/** Which agents a rule's deletions wait for; none with --cni-agent-gate=off. */
function agentSpecs(config: Config, rule: Rule): AgentSpec[] {
  const gate = config.cniAgentGate;
  if (!gate) return [];
  const specs: AgentSpec[] = [];
  const selector = gate.selector ?? rule.cniAgentSelector;
  if (selector) {
    specs.push({
      reason: "cni_agent_not_ready",
      what: "CNI agent",
      selectorFlag: "--cni-agent-selector",
      selector,
      namespace: gate.namespace,
    });
  }
  if (isAmbient(rule)) {
    specs.push({
      reason: "ztunnel_not_ready",
      what: "ztunnel",
      selectorFlag: "--ztunnel-selector",
      selector: rule.ztunnelSelector,
      namespace: rule.ztunnelNamespace || undefined,
    });
  }
  return specs;
}

export function buildNodeAgents(
  config: Config,
  transport: KubeTransport,
  observerFor: (what: string, agents: CniAgents) => ReflectorObserver<AgentFacts>,
): NodeAgents {
  const byScope = new Map<string, CniAgents>();
  const reflectors: PodReflector<AgentFacts>[] = [];
  const gatesByRule = new Map<string, NodeAgentGate[]>();
  for (const rule of config.rules) {
    const gates: NodeAgentGate[] = [];
    for (const spec of agentSpecs(config, rule)) {
      const scopeKey = `${spec.namespace ?? ""}|${spec.selector}`;
      let agents = byScope.get(scopeKey);
      if (!agents) {
        const fresh = new CniAgents();
        agents = fresh;
        byScope.set(scopeKey, agents);
        reflectors.push(
          new PodReflector<AgentFacts>({
            transport,
            collection: "pods",
            scope: scopeOf({
              namespace: spec.namespace,
              labelSelector: spec.selector,
              fieldSelector: fieldSelector([], config.nodeName ? [["spec.nodeName", "=", config.nodeName]] : []),
            }),
            store: agents.store,
            transform: (pod) => fresh.toFacts(pod, Date.now()),
            pageSize: config.listPageSize,
            watchTimeoutMs: config.watchTimeoutMs,
            stallTimeoutMs: config.watchStallTimeoutMs,
            backoff: { baseMs: 500, maxMs: 30_000, jitter: 0.5 },
            observer: observerFor(`${spec.what} ${spec.selector} in ${spec.namespace ?? "all namespaces"}`, agents),
          }),
        );
      }
      // Both must have been Ready for a while: a ztunnel that just turned Ready has not taken its pods over yet.
      const minReadyMs = config.cniAgentGate?.minReadyMs ?? 0;
      gates.push({ agents, reason: spec.reason, what: spec.what, selectorFlag: spec.selectorFlag, minReadyMs });
    }
    gatesByRule.set(rule.name, gates);
  }
  return { gatesByRule, reflectors };
}
