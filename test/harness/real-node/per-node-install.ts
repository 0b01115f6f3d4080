// cni-repair installed on the real-node cluster as a user installs it: the image `make image` built, imported into
// the real node's containerd under the name the shipped workload gives it (there is no registry), then the
// rendered install (the per-node overlay, or the Helm chart in either mode with a test's values) applied as is.
// Its pods on the real node run the image for real.
import { AppsV1Api, CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { renderChart } from "../helm.js";
import { OciLayout } from "../oci-layout.js";
import {
  controllerContainer,
  INSTALL,
  installRendered,
  type Overlay,
  type Rendered,
  renderOverlay,
  uninstall,
} from "../overlays.js";
import { waitFor } from "../wait.js";
import type { RealNodeCluster } from "./real-node-cluster.js";

const SELECTOR = "app.kubernetes.io/name=cni-repair";

export async function installPerNode(cluster: RealNodeCluster): Promise<Rendered> {
  return await installOnNode(cluster, await renderOverlay("per-node"));
}

/** `helm template` of the chart in `mode` with `values`, installed (the image imported first). */
export async function installChart(
  cluster: RealNodeCluster,
  mode: Extract<Overlay, "cluster" | "per-node">,
  values: Readonly<Record<string, string>> = {},
): Promise<Rendered> {
  return await installOnNode(cluster, await renderChart(mode, values));
}

async function installOnNode(cluster: RealNodeCluster, rendered: Rendered): Promise<Rendered> {
  const image = controllerContainer(rendered).image;
  if (!image) throw new Error(`the ${rendered.overlay} install's container names no image`);
  await cluster.node.containerd.importOciLayout(OciLayout.built().dir, image);
  await installRendered(cluster.plane, rendered);
  return rendered;
}

/** cni-repair's pods that are Ready, once `count` of them are. */
export async function readyControllerPods(cluster: RealNodeCluster, count: number): Promise<V1Pod[]> {
  const api = cluster.plane.kubeConfig().makeApiClient(CoreV1Api);
  const { ready } = await waitFor(
    `${count} cni-repair pod(s) to be Ready`,
    async () => {
      cluster.assertRunning();
      const pods = await api.listNamespacedPod({ namespace: INSTALL.namespace, labelSelector: SELECTOR });
      const ready = pods.items.filter((pod) =>
        pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      );
      return ready.length >= count ? { ready } : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  return ready;
}

/**
 * Uninstalls it and removes its ReplicaSets and pods at once: no garbage collector runs here to delete a deleted
 * workload's dependents (and the one on a Node without a kubelet would never finish a graceful delete). A
 * Deployment's ReplicaSet left behind keeps failing to recreate its pods (their ServiceAccount is gone), and the
 * ReplicaSet controller's growing back-off then delays the next install's pods, which adopt it. The tokens bound to
 * the pods stop working with them.
 */
export async function removeInstalled(cluster: RealNodeCluster): Promise<void> {
  await uninstall(cluster.plane);
  const apps = cluster.plane.kubeConfig().makeApiClient(AppsV1Api);
  await apps.deleteCollectionNamespacedReplicaSet({ namespace: INSTALL.namespace, labelSelector: SELECTOR });
  const api = cluster.plane.kubeConfig().makeApiClient(CoreV1Api);
  await api.deleteCollectionNamespacedPod({
    namespace: INSTALL.namespace,
    labelSelector: SELECTOR,
    gracePeriodSeconds: 0,
  });
}
