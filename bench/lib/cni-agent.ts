// The node's Istio CNI agent pod (DaemonSet istio-cni-node), as cni-repair's agent gate finds it, Ready or not.
import { type BenchClient, podPath, podsPath } from "./kube-client.js";
import { ensureNamespace } from "./population.js";

const AGENT_NAMESPACE = "bench-istio-system";
const MERGE_PATCH = "application/merge-patch+json";

export const agentPodName = (node: string): string => `istio-cni-node-${node}`;

/** Creates the agent pod on `node` (once; a second call finds it) and leaves its readiness to setAgentReady. */
export async function ensureCniAgent(client: BenchClient, node: string): Promise<void> {
  await ensureNamespace(client, AGENT_NAMESPACE);
  try {
    await client.request("POST", podsPath(AGENT_NAMESPACE), {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: agentPodName(node),
        namespace: AGENT_NAMESPACE,
        labels: { "k8s-app": "istio-cni-node" },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "DaemonSet",
            name: "istio-cni-node",
            uid: "5b0c6b2e-0000-4000-8000-00000000c41e",
            controller: true,
          },
        ],
      },
      spec: { nodeName: node, containers: [{ name: "install-cni", image: "docker.io/istio/install-cni:1.27.0" }] },
    });
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes(" 409 ")) throw error;
  }
}

/** Writes the agent's Ready condition: True since `since`, or False (NotReady: crashed, restarting) now. */
export async function setAgentReady(client: BenchClient, node: string, since: Date | undefined): Promise<void> {
  await client.request(
    "PATCH",
    `${podPath(AGENT_NAMESPACE, agentPodName(node))}/status`,
    {
      status: {
        phase: "Running",
        conditions: [
          { type: "Ready", status: since ? "True" : "False", lastTransitionTime: (since ?? new Date()).toISOString() },
        ],
      },
    },
    MERGE_PATCH,
  );
}

/**
 * Istio's repair settings beside the agents, its repair switched off (what its chart renders for repair.enabled=false),
 * so cni-repair at its defaults (--istio-repair=auto: it reads them) acts on the istio rule, as in a cluster whose
 * Istio repair is off.
 */
export async function ensureIstioRepairOff(client: BenchClient): Promise<void> {
  await ensureNamespace(client, AGENT_NAMESPACE);
  try {
    await client.request("POST", `/api/v1/namespaces/${AGENT_NAMESPACE}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "istio-cni-config", namespace: AGENT_NAMESPACE },
      data: { REPAIR_ENABLED: "false" },
    });
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes(" 409 ")) throw error;
  }
}
