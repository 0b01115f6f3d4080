// The node agents deletions wait for (the mesh's CNI agent; ztunnel for ambient): one reflector per distinct
// selector and namespace, shared by the rules that name it, and the gates each rule checks.
import { agentNamespaceOf } from "../config/agent-namespaces.js";
import type { Config } from "../config/config.js";
import { fieldSelector, scopeOf } from "../config/selectors.js";
import { isAmbient, type Rule } from "../detect/rule.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { type Clock, systemClock } from "../util/clock.js";
import { type AgentFacts, CniAgents } from "./cni-agent-pods.js";
import { AGENT_PROJECTION, podsAsProtobuf } from "./pod-projection.js";
import { Reflector } from "./reflector.js";
import type { ReflectorSettings } from "./reflector-settings.js";
import { type WatchHooks, watchTelemetry } from "./watch-telemetry.js";

/** A node agent (DaemonSet pod) that must be Ready on a pod's node, for long enough, before deleting there. */
export type NodeAgentGate = {
  readonly agents: CniAgents;
  readonly reason: "cni_agent_not_ready" | "ztunnel_not_ready";
  /** For messages: "CNI agent", "ztunnel". */
  readonly what: string;
  /** For messages: which flag sets the selector. */
  readonly selectorFlag: string;
  readonly minReadyMs: number;
};

/** One watched set of agent pods: its cache and its reflector (subscribe to it for agent changes). */
export type AgentWatch = {
  /** For logs: "CNI agent k8s-app=istio-cni-node in all namespaces". */
  readonly what: string;
  readonly agents: CniAgents;
  readonly reflector: Reflector<AgentFacts>;
};

export type NodeAgentWatcher = {
  readonly gatesByRule: ReadonlyMap<string, readonly NodeAgentGate[]>;
  readonly watches: readonly AgentWatch[];
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
      namespace: agentNamespaceOf(gate.namespaces, rule.name),
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

/** The `resource` label of an agent watch's metrics: which agents, apart from the pods judged. */
const agentResource = (reason: AgentSpec["reason"]) =>
  reason === "ztunnel_not_ready" ? "ztunnel-pods" : "cni-agent-pods";

export function watchNodeAgents(
  config: Config,
  settings: ReflectorSettings,
  telemetry: { readonly metrics: Metrics; readonly log: Logger; readonly failed: WatchHooks["failed"] },
  clock: Clock = systemClock,
): NodeAgentWatcher {
  const byScope = new Map<string, AgentWatch>();
  const gatesByRule = new Map<string, NodeAgentGate[]>();
  // Both must have been Ready for a while: a ztunnel that just turned Ready has not taken its pods over yet.
  const minReadyMs = config.cniAgentGate?.minReadyMs ?? 0;
  for (const rule of config.rules) {
    const gates: NodeAgentGate[] = [];
    for (const spec of agentSpecs(config, rule)) {
      const scope = scopeOf({
        namespace: spec.namespace,
        labelSelector: spec.selector,
        fieldSelector: fieldSelector([], config.nodeName ? [["spec.nodeName", "=", config.nodeName]] : []),
      });
      const scopeKey = JSON.stringify(scope);
      let watch = byScope.get(scopeKey);
      if (!watch) {
        const agents = new CniAgents();
        const what = `${spec.what} ${spec.selector} in ${spec.namespace ?? "all namespaces"}`;
        const reflector = new Reflector<AgentFacts>({
          ...settings,
          collection: "pods",
          scope,
          store: agents.store,
          protobuf: podsAsProtobuf(AGENT_PROJECTION),
          transform: (pod) => agents.toFacts(pod, clock.monotonic()),
          observer: watchTelemetry(
            telemetry.metrics,
            agentResource(spec.reason),
            telemetry.log.child({ watch: what }),
            {
              listed: (count) => {
                if (count > 0) return;
                telemetry.log.warn("node agent gate: no pod matches the selector; broken pods will be held", { what });
              },
              failed: telemetry.failed,
            },
          ),
        });
        watch = { what, agents, reflector };
        byScope.set(scopeKey, watch);
      }
      gates.push({
        agents: watch.agents,
        reason: spec.reason,
        what: spec.what,
        selectorFlag: spec.selectorFlag,
        minReadyMs,
      });
    }
    gatesByRule.set(rule.name, gates);
  }
  const watcher = { gatesByRule, watches: [...byScope.values()] };
  for (const { watch, rules } of cniAgentSets(watcher)) {
    watch.reflector.subscribe(() => {
      for (const rule of rules) {
        telemetry.metrics.cniAgentPods.set({ rule, ready: "true" }, watch.agents.readyCount);
        telemetry.metrics.cniAgentPods.set({ rule, ready: "false" }, watch.agents.count - watch.agents.readyCount);
      }
    });
  }
  return watcher;
}

/**
 * The CNI agent sets (not ztunnel's) that deletions wait for, each watch once with the rules whose gate names it,
 * in the order the rules first name them. Startup taints wait for the same agents.
 */
export function cniAgentSets(watcher: NodeAgentWatcher): { readonly watch: AgentWatch; readonly rules: string[] }[] {
  const sets = new Map<CniAgents, { readonly watch: AgentWatch; readonly rules: string[] }>();
  for (const [rule, gates] of watcher.gatesByRule) {
    for (const { agents } of gates.filter((gate) => gate.reason === "cni_agent_not_ready")) {
      const watch = watcher.watches.find((candidate) => candidate.agents === agents);
      if (watch === undefined) continue;
      const set = sets.get(agents) ?? { watch, rules: [] };
      set.rules.push(rule);
      sets.set(agents, set);
    }
  }
  return [...sets.values()];
}
