// Which Istio repair settings apply, from what each namespace holds: the settings are those of the namespace where
// Istio's CNI agent runs (its DaemonSet, or its pods), wherever that is (istio-system, kube-system on GKE, any
// other). Agents present but nothing saying how they repair is "unknown", held as in-place: an agent started without
// those settings uses Istio's defaults, which repair in place. Pure: facts in, state and warnings out.
import {
  ISTIO_CNI_CONFIGMAP,
  ISTIO_CNI_DAEMONSET,
  type IstioRepairState,
  istioRepairMode,
  parseIstioRepair,
} from "./istio-repair-settings.js";

/** What one namespace holds of Istio's CNI agent. */
export type IstioNamespaceFacts = {
  readonly namespace: string;
  /** The REPAIR_* data of its istio-cni-config ConfigMap; undefined: no such ConfigMap. */
  readonly configMap: Readonly<Record<string, string>> | undefined;
  /** The literal REPAIR_* env of its istio-cni-node DaemonSet; undefined: no such DaemonSet. */
  readonly daemonSetEnv: Readonly<Record<string, string>> | undefined;
  /** Istio's CNI agent pods were seen there (the node-agent gate's watch), whatever their DaemonSet's name. */
  readonly agentPods: boolean;
};

export type ResolvedIstioRepair = { readonly state: IstioRepairState; readonly warnings: readonly string[] };

const runsAgent = (facts: IstioNamespaceFacts): boolean => facts.daemonSetEnv !== undefined || facts.agentPods;

/** The settings of one namespace, or why they cannot be known. */
function settingsIn(facts: IstioNamespaceFacts): ResolvedIstioRepair {
  const { namespace, configMap, daemonSetEnv } = facts;
  const mapName = `ConfigMap ${namespace}/${ISTIO_CNI_CONFIGMAP}`;
  const setName = `DaemonSet ${namespace}/${ISTIO_CNI_DAEMONSET}`;
  // The agent sees both: the chart loads the ConfigMap with envFrom, and an explicit env entry wins over it.
  const values = { ...configMap, ...daemonSetEnv };
  const from = [configMap && mapName, daemonSetEnv && Object.keys(daemonSetEnv).length > 0 && setName];
  const parsed = parseIstioRepair(values, from.filter(Boolean).join(" + ") || mapName, {
    // A ConfigMap of Istio's chart means its defaults apply; a DaemonSet alone says so only with a REPAIR_* entry.
    requireAKey: configMap === undefined,
  });
  if (parsed !== undefined)
    return { state: { kind: "detected", settings: parsed.settings }, warnings: parsed.warnings };
  const why =
    `Istio's CNI agent runs in namespace ${namespace} but neither ${mapName} nor a REPAIR_* env entry of ` +
    `${setName} says how it repairs (without them Istio's defaults repair in place)`;
  return { state: { kind: "unknown", why }, warnings: [] };
}

/** The one state the istio rule goes by, from every namespace that holds any of Istio's CNI agent. */
export function resolveIstioRepair(all: readonly IstioNamespaceFacts[]): ResolvedIstioRepair {
  const withAgent = all.filter(runsAgent);
  // No agent seen anywhere: a ConfigMap still says what Istio's agent does wherever it runs unseen.
  const relevant = withAgent.length > 0 ? withAgent : all.filter((facts) => facts.configMap !== undefined);
  if (relevant.length === 0) return { state: { kind: "absent" }, warnings: [] };
  const each = [...relevant].sort((a, b) => a.namespace.localeCompare(b.namespace)).map(settingsIn);
  const warnings = each.flatMap((resolved) => resolved.warnings);
  const [first] = each;
  if (each.length === 1 && first !== undefined) return first;
  const unknown = each.find((resolved) => resolved.state.kind === "unknown");
  if (unknown !== undefined) return { state: unknown.state, warnings };
  const modes = new Set(each.map((resolved) => istioRepairMode(resolved.state)));
  if (modes.size === 1 && first?.state.kind === "detected") {
    const sources = each.map((resolved) => (resolved.state.kind === "detected" ? resolved.state.settings.source : ""));
    return { state: { kind: "detected", settings: { ...first.state.settings, source: sources.join("; ") } }, warnings };
  }
  const namespaces = relevant.map((facts) => facts.namespace).sort();
  const why = `Istio's CNI agents in namespaces ${namespaces.join(", ")} repair differently (${[...modes].join(", ")})`;
  return { state: { kind: "unknown", why }, warnings };
}
