// A mesh's CNI agent pods (the DaemonSet pods the controller's readiness gate looks for), Ready or not yet.
import {
  ApiException,
  type CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1PodCondition,
} from "@kubernetes/client-node";
import { type Mesh, meshedPod } from "./pod-fixtures.js";

/** The agent DaemonSet of each mesh and the k8s-app label its pods carry (what the presets select). */
const AGENTS: Record<Exclude<Mesh, "none">, { name: string; label: string }> = {
  istio: { name: "istio-cni-node", label: "istio-cni-node" },
  linkerd: { name: "linkerd-cni", label: "linkerd-cni" },
};

/** The name of a mesh's agent pod on a node. */
export function agentName(mesh: Exclude<Mesh, "none">, nodeName: string): string {
  return `${AGENTS[mesh].name}-${nodeName}`;
}

export type CniAgentOptions = {
  readonly namespace: string;
  readonly mesh: Exclude<Mesh, "none">;
  readonly nodeName: string;
  /** Ready since then; without it the agent is Running but not Ready yet (still starting). */
  readonly readySince?: Date;
  /**
   * An Istio agent comes with its repair settings switched off (the default), so the istio rule acts beside it:
   * agents of earlier tests stay on the shared API server, and one without settings would make every later
   * controller that reads all namespaces hold istio pods as "unknown". "own": the test writes (or withholds) them.
   */
  readonly istioSettings?: "repair off" | "own";
};

/** Creates the agent pod on the node, owned by its DaemonSet, and writes its status. */
export async function createCniAgent(api: CoreV1Api, options: CniAgentOptions): Promise<void> {
  const { namespace, mesh, nodeName } = options;
  const name = agentName(mesh, nodeName);
  await api.createNamespacedPod({
    namespace,
    body: meshedPod({
      name,
      namespace,
      nodeName,
      mesh: "none",
      owner: { kind: "DaemonSet", name: AGENTS[mesh].name },
      labels: { "k8s-app": AGENTS[mesh].label },
    }),
  });
  if (mesh === "istio" && options.istioSettings !== "own") await createIstioRepairOff(api, namespace);
  await writeAgentStatus(api, { namespace, name }, options.readySince);
}

/**
 * Istio's repair settings beside its agent with its repair switched off (what its chart renders for
 * repair.enabled=false), unless they are there already: an Istio agent without them is "unknown" and its pods held.
 */
async function createIstioRepairOff(api: CoreV1Api, namespace: string): Promise<void> {
  try {
    await api.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: "istio-cni-config" }, data: { REPAIR_ENABLED: "false" } },
    });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
}

/**
 * Marks the agent Ready since the given time, as a finished DaemonSet rollout would; "no time": Ready without a
 * lastTransitionTime (a kubelet never writes that; a hand-written or broken status may).
 */
export async function setCniAgentReady(
  api: CoreV1Api,
  agent: { namespace: string; name: string },
  since: Date | "no time",
): Promise<void> {
  await writeAgentStatus(api, agent, since);
}

/** The agent turns NotReady (crashed, restarting), as the kubelet would report it. */
export async function setCniAgentNotReady(api: CoreV1Api, agent: { namespace: string; name: string }): Promise<void> {
  await writeAgentStatus(api, agent, undefined);
}

async function writeAgentStatus(
  api: CoreV1Api,
  agent: { namespace: string; name: string },
  readySince: Date | "no time" | undefined,
): Promise<void> {
  await api.patchNamespacedPodStatus(
    {
      namespace: agent.namespace,
      name: agent.name,
      body: { status: { phase: "Running", conditions: [agentReadyCondition(readySince)] } },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

/**
 * The agent's Ready condition as a kubelet writes it (test/fixtures/kubelet): True since then, or False since now
 * (undefined); "no time" is True without a lastTransitionTime, which no kubelet writes (a synthetic edge case).
 */
export function agentReadyCondition(readySince: Date | "no time" | undefined): V1PodCondition {
  if (readySince === "no time") return { type: "Ready", status: "True" };
  if (readySince) return { type: "Ready", status: "True", lastTransitionTime: readySince };
  return {
    type: "Ready",
    status: "False",
    lastTransitionTime: new Date(),
    reason: "ContainersNotReady",
    message: "containers with unready status: [install-cni]",
  };
}
