// cni-repair's per-node install on the real-node cluster, as a user installs it: the image `make image` built,
// imported into the real node's containerd under the name the shipped DaemonSet gives it (there is no registry),
// then the per-node overlay applied as rendered. Its DaemonSet pod on the real node runs the image for real.
import { CoreV1Api } from "@kubernetes/client-node";
import { OciLayout } from "../oci-layout.js";
import { controllerContainer, INSTALL, installRendered, type Rendered, renderOverlay, uninstall } from "../overlays.js";
import type { RealNodeCluster } from "./real-node-cluster.js";

export async function installPerNode(cluster: RealNodeCluster): Promise<Rendered> {
  const rendered = await renderOverlay("per-node");
  const image = controllerContainer(rendered).image;
  if (!image) throw new Error("the per-node overlay's container names no image");
  await cluster.node.containerd.importOciLayout(OciLayout.built().dir, image);
  await installRendered(cluster.plane, rendered);
  return rendered;
}

/**
 * Uninstalls it and removes its pods at once: no garbage collector runs here to delete a deleted DaemonSet's pods
 * (and the one on a Node without a kubelet would never finish a graceful delete). The tokens bound to them stop
 * working with them.
 */
export async function removePerNode(cluster: RealNodeCluster): Promise<void> {
  await uninstall(cluster.plane);
  const api = cluster.plane.kubeConfig().makeApiClient(CoreV1Api);
  await api.deleteCollectionNamespacedPod({
    namespace: INSTALL.namespace,
    labelSelector: "app.kubernetes.io/name=cni-repair",
    gracePeriodSeconds: 0,
  });
}
