// The controller's own pod, as the API server knows it once scheduled: a Node, and a pod of the ServiceAccount on it,
// so a TokenRequest bound to that pod gives the token the kubelet would project (it names the node).
import { ApiException, CoreV1Api } from "@kubernetes/client-node";
import type { ControlPlane } from "./control-plane.js";

export type ControllerPod = { readonly namespace: string; readonly name: string; readonly uid: string };

/** Creates the Node unless it exists (nothing runs it: it only has to be there for the token to name it). */
export async function ensureNode(plane: ControlPlane, nodeName: string): Promise<void> {
  const api = plane.kubeConfig().makeApiClient(CoreV1Api);
  try {
    await api.createNode({ body: { metadata: { name: nodeName } } });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
}

/**
 * A pod of the ServiceAccount on the node (replacing one of the same name), meeting the Pod Security "restricted"
 * standard the install's namespace enforces. Never started: only its identity matters.
 */
export async function createControllerPod(
  plane: ControlPlane,
  placement: { namespace: string; serviceAccount: string; podName: string; nodeName: string },
): Promise<ControllerPod> {
  const { namespace, serviceAccount, podName: name, nodeName } = placement;
  await ensureNode(plane, nodeName);
  await deleteControllerPod(plane, { namespace, name });
  const api = plane.kubeConfig().makeApiClient(CoreV1Api);
  const pod = await api.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels: { "app.kubernetes.io/name": "cni-repair-test-controller" } },
      spec: {
        nodeName,
        serviceAccountName: serviceAccount,
        securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "cni-repair",
            image: "registry.invalid/cni-repair:test",
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          },
        ],
      },
    },
  });
  const uid = pod.metadata?.uid;
  if (!uid) throw new Error(`pod ${namespace}/${name} was created without a uid`);
  return { namespace, name, uid };
}

/** Removes the pod at once (no kubelet will finish a graceful delete); absent is fine. */
export async function deleteControllerPod(
  plane: ControlPlane,
  pod: { namespace: string; name: string },
): Promise<void> {
  const api = plane.kubeConfig().makeApiClient(CoreV1Api);
  try {
    await api.deleteNamespacedPod({ namespace: pod.namespace, name: pod.name, gracePeriodSeconds: 0 });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 404)) throw error;
  }
}
