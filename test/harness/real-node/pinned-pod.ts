// One meshed pod bound to a real node (nodeName set: no scheduler needed), started and waited for up to a stage of
// its life, for the tests that only need something running on the node.
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { waitFor } from "../wait.js";
import { meshedPodSpec } from "./mesh-workloads.js";
import type { RealNode } from "./real-node.js";

/** How far the pod has come: its validator has exited once (it restarts while the agent is down), or its app runs. */
const STAGES = {
  "validator-ran": {
    what: "the pod's validator to have run",
    reached: (pod: V1Pod) => pod.status?.initContainerStatuses?.[0]?.lastState?.terminated !== undefined,
  },
  "app-running": {
    what: "the pod's app container to run",
    reached: (pod: V1Pod) => pod.status?.containerStatuses?.[0]?.state?.running !== undefined,
  },
} as const;

/** Creates the pod in the default namespace and waits (up to 2 minutes) until it reaches `stage`. */
export async function startPinnedPod(
  api: CoreV1Api,
  node: RealNode,
  name: string,
  stage: keyof typeof STAGES,
): Promise<void> {
  await api.createNamespacedPod({
    namespace: "default",
    body: { metadata: { name }, spec: { ...meshedPodSpec(node), nodeName: node.name } },
  });
  const { what, reached } = STAGES[stage];
  await waitFor(what, async () => reached(await api.readNamespacedPod({ namespace: "default", name })), {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
}
