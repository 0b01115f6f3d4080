// Switching modes with kustomize as the docs say: the Namespace is applied once on its own, and the overlays do not
// contain it, so deleting one overlay and applying another never deletes the Namespace or the monitoring objects in
// it (the next apply would otherwise fail with "namespace is being terminated").
import { join } from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import { expect } from "chai";
import { kubectl } from "../../harness/kubectl.js";
import { installMonitoringCrds, removeMonitoringCrds } from "../../harness/monitoring-crds.js";
import { applyNamespace, INSTALL, manifestsDir, OVERLAYS, renderOverlay, uninstall } from "../../harness/overlays.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("manifests: switching modes keeps the Namespace and the monitoring objects", function () {
  this.timeout(120_000);

  before(async () => {
    await uninstall(controlPlane());
    await installMonitoringCrds(controlPlane());
  });

  after(async () => {
    const plane = controlPlane();
    await kubectl(["delete", "--ignore-not-found", "-k", join(manifestsDir(), "monitoring")], { plane });
    await removeMonitoringCrds(plane);
    await uninstall(plane);
  });

  it("no overlay contains the Namespace", async () => {
    for (const overlay of OVERLAYS) {
      const kinds = (await renderOverlay(overlay)).objects.map((object) => object.kind);
      expect(kinds, overlay).to.not.include("Namespace");
    }
  });

  it("kubectl delete -k the old overlay, kubectl apply -k the new one: same Namespace, same monitoring objects", async () => {
    const plane = controlPlane();
    const dir = (path: string) => join(manifestsDir(), path);
    const uids = async (kinds: string) => {
      const list = JSON.parse(
        await kubectl(["get", kinds, "--namespace", INSTALL.namespace, "-o", "json"], { plane }),
      ) as { items: KubernetesObject[] };
      return list.items.map((object) => `${object.kind}/${object.metadata?.name}/${object.metadata?.uid}`).sort();
    };
    const namespaceUid = async () =>
      (JSON.parse(await kubectl(["get", "namespace", INSTALL.namespace, "-o", "json"], { plane })) as KubernetesObject)
        .metadata?.uid;

    // Install: the namespace once (and Istio's, which Istio's install made: the istio preset's Role goes there),
    // a mode, the monitoring objects.
    await applyNamespace(plane);
    await kubectl(["apply", "-k", dir("namespace")], { plane });
    await kubectl(["apply", "-k", dir("overlays/dry-run")], { plane });
    await kubectl(["apply", "-k", dir("monitoring")], { plane });
    const namespace = await namespaceUid();
    const monitoring = await uids("servicemonitors,prometheusrules,configmaps");
    expect(monitoring.map((entry) => entry.split("/").slice(0, 2).join("/"))).to.include.members([
      "ServiceMonitor/cni-repair",
      "PrometheusRule/cni-repair",
      "ConfigMap/cni-repair-dashboard",
    ]);

    // Every switch, as documented.
    let previous = "dry-run";
    for (const next of ["cluster", "per-node", "label-only", "dry-run"]) {
      await kubectl(["delete", "-k", dir(`overlays/${previous}`)], { plane });
      await kubectl(["apply", "-k", dir(`overlays/${next}`)], { plane });
      expect(await namespaceUid(), `${previous} -> ${next}`).to.equal(namespace);
      expect(await uids("servicemonitors,prometheusrules,configmaps"), `${previous} -> ${next}`).to.deep.equal(
        monitoring,
      );
      const workloads = await uids("deployments,daemonsets");
      expect(
        workloads.map((entry) => entry.split("/")[0]),
        next,
      ).to.deep.equal([next === "per-node" ? "DaemonSet" : "Deployment"]);
      previous = next;
    }
  });
});
