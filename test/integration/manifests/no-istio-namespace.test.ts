// The documented `kubectl apply -k manifests/overlays/<mode>` succeeds on a cluster without an istio-system namespace
// (Linkerd only, or Istio's CNI agent in kube-system as on GKE): nothing is put in Istio's namespace, whose place is
// found at run time. Its own API server: the shared one has an istio-system from other tests.
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { ControlPlane } from "../../harness/control-plane.js";
import { kubectl } from "../../harness/kubectl.js";
import { manifestsDir, OVERLAYS } from "../../harness/overlays.js";
import { renderOverlayWithPresets } from "../../harness/presets.js";

describe("manifests: installs where istio-system does not exist", function () {
  this.timeout(5 * 60_000);
  let plane: ControlPlane;

  before(async () => {
    plane = await ControlPlane.start();
  });

  after(async () => {
    await plane?.stop();
  });

  it("every overlay applies, with and without the linkerd preset, and istio-system is never needed", async () => {
    const namespaces = async () =>
      (await plane.kubeConfig().makeApiClient(CoreV1Api).listNamespace()).items.map((ns) => ns.metadata?.name);
    expect(await namespaces()).to.not.include("istio-system");
    const apply = async (...args: string[]) =>
      await kubectl(["apply", "--server-side", "--force-conflicts", ...args], { plane });
    await apply("-k", join(manifestsDir(), "namespace"));
    for (const overlay of OVERLAYS) {
      const applied = await apply("-k", join(manifestsDir(), "overlays", overlay));
      expect(applied, overlay).to.include("clusterrole.rbac.authorization.k8s.io/cni-repair-istio-repair");
    }
    // Linkerd only: the preset component drops the read of Istio's settings altogether.
    const linkerd = await renderOverlayWithPresets("cluster", ["linkerd"]);
    expect(linkerd.objects.map((object) => object.metadata?.name)).to.not.include("cni-repair-istio-repair");
    await kubectl(["apply", "--server-side", "--force-conflicts", "-f", "-"], { plane, input: linkerd.yaml });
    expect(await namespaces()).to.not.include("istio-system");
  });
});
