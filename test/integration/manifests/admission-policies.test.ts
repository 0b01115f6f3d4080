// The admission policies of the shipped manifests, enforced by the real API server: applied exactly as
// manifests/overlays renders them, then exercised with the controller's own ServiceAccount tokens (per-node: bound
// to its pod on node A, as the kubelet projects it). The audit log is the ground truth of what the server answered.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { answersInForce, auditedActions, deniedBy, podActions, policyInForce } from "../../harness/admission.js";
import { outcomeOf } from "../../harness/api-errors.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { createControllerPod, deleteControllerPod, ensureNode } from "../../harness/controller-pod.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { INSTALL, installOverlay, uninstall } from "../../harness/overlays.js";
import { meshedPod } from "../../harness/pod-fixtures.js";
import { serviceAccountToken } from "../../harness/service-account-files.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("manifests: admission policies hold the controller's ServiceAccount to its job", function () {
  this.timeout(120_000);

  after(async () => {
    await uninstall(controlPlane());
  });

  describe("per-node overlay: a token bound to the controller's pod on node A", () => {
    let namespace: string;
    let token: string;
    let nodeA: string;
    let nodeB: string;
    const controllerPod = { namespace: INSTALL.namespace, name: "cni-repair-admission-a" };

    before(async () => {
      const plane = controlPlane();
      await installOverlay(plane, "per-node");
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      namespace = await createTestNamespace(api, "ap");
      [nodeA, nodeB] = [`${namespace}-a`, `${namespace}-b`];
      await ensureNode(plane, nodeB);
      const pod = await createControllerPod(plane, {
        namespace: INSTALL.namespace,
        serviceAccount: INSTALL.serviceAccount,
        podName: controllerPod.name,
        nodeName: nodeA,
      });
      token = await serviceAccountToken(plane, INSTALL.namespace, INSTALL.serviceAccount, pod);
      await createPodInState(api, { namespace, name: "probe-elsewhere", nodeName: nodeB });
      await policyInForce(() => podActions(plane, token, namespace).remove("probe-elsewhere", true));
    });

    after(async () => {
      await deleteControllerPod(controlPlane(), controllerPod);
    });

    it("is refused (403, naming the own-node policy) deleting or relabelling a pod on node B, allowed on node A", async () => {
      const plane = controlPlane();
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      await createPodInState(api, { namespace, name: "broken-b", nodeName: nodeB });
      await createPodInState(api, { namespace, name: "broken-a", nodeName: nodeA });
      const actions = podActions(plane, token, namespace);

      const labelB = await actions.label("broken-b");
      const deleteB = await actions.remove("broken-b");
      for (const refused of [labelB, deleteB]) {
        expect(refused.code).to.equal(403);
        expect(refused.message).to.include(deniedBy("cni-repair-own-node"));
        expect(refused.message).to.include(
          `the per-node cni-repair of node ${nodeA} may not delete or relabel pod ${namespace}/broken-b on node ${nodeB}`,
        );
      }
      expect((await actions.label("broken-a")).code).to.equal(200);
      expect((await actions.remove("broken-a")).code).to.equal(200);

      // The pod on node B is untouched: no label, no deletion.
      const podB = await api.readNamespacedPod({ namespace, name: "broken-b" });
      expect(podB.metadata?.deletionTimestamp).to.equal(undefined);
      expect(podB.metadata?.labels?.["cni.istio.io/uninitialized"]).to.equal(undefined);
      const podA = await api.readNamespacedPod({ namespace, name: "broken-a" });
      expect(podA.metadata?.deletionTimestamp).to.be.instanceOf(Date);

      // The API server's own record: exactly these four requests of the ServiceAccount, with these answers.
      const audited = auditedActions(plane, namespace);
      expect(audited.map(({ line }) => line)).to.deep.equal([
        "patch/status broken-b 403",
        "delete broken-b 403",
        "patch/status broken-a 200",
        "delete broken-a 200",
      ]);
      expect(JSON.stringify(audited[1]?.event)).to.include("cni-repair-own-node");
    });

    it("a token not bound to a pod names no node, and is refused even on node A", async () => {
      const plane = controlPlane();
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      await createPodInState(api, { namespace, name: "broken-a2", nodeName: nodeA });
      const unbound = await serviceAccountToken(plane, INSTALL.namespace, INSTALL.serviceAccount);
      const refused = await podActions(plane, unbound, namespace).remove("broken-a2");
      expect(refused.code).to.equal(403);
      expect(refused.message).to.include(deniedBy("cni-repair-own-node"));
      expect(refused.message).to.include("this token names no node");
    });

    it("a pod on its own node without a mesh marker is still refused, by the meshed-pods policy", async () => {
      const plane = controlPlane();
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      await api.createNamespacedPod({
        namespace,
        body: meshedPod({ namespace, name: "plain-a", nodeName: nodeA, mesh: "none" }),
      });
      const refused = await podActions(plane, token, namespace).remove("plain-a");
      expect(refused.code).to.equal(403);
      expect(refused.message).to.include(deniedBy("cni-repair-meshed-pods"));
    });
  });

  describe("cluster overlay: the cluster-wide ServiceAccount", () => {
    let namespace: string;
    let token: string;

    before(async () => {
      const plane = controlPlane();
      ({ token } = await installOverlay(plane, "cluster"));
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      namespace = await createTestNamespace(api, "ac");
      await api.createNamespacedPod({ namespace, body: meshedPod({ namespace, name: "probe-plain", mesh: "none" }) });
      await policyInForce(() => podActions(plane, token, namespace).remove("probe-plain", true));
    });

    it("is refused (403, naming the meshed-pods policy) deleting or relabelling a pod without a mesh marker, allowed deleting a broken meshed pod", async () => {
      const plane = controlPlane();
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      await api.createNamespacedPod({ namespace, body: meshedPod({ namespace, name: "plain", mesh: "none" }) });
      await createPodInState(api, { namespace, name: "broken-istio" });
      await createPodInState(api, { namespace, name: "broken-linkerd", mesh: "linkerd" });
      const actions = podActions(plane, token, namespace);
      await answersInForce({ plain: 403, "broken-istio": 200, "broken-linkerd": 403 }, (name) =>
        actions.remove(name, true),
      );

      const deletePlain = await actions.remove("plain");
      const labelPlain = await actions.label("plain");
      for (const refused of [deletePlain, labelPlain]) {
        expect(refused.code).to.equal(403);
        expect(refused.message).to.include(deniedBy("cni-repair-meshed-pods"));
        expect(refused.message).to.include("annotation sidecar.istio.io/status (istio)");
      }
      expect((await actions.remove("broken-istio")).code).to.equal(200);
      // The cluster overlay enables the istio preset only: a Linkerd pod is not one of its meshes' pods.
      expect((await actions.remove("broken-linkerd")).code).to.equal(403);

      const audited = auditedActions(plane, namespace);
      expect(audited.map(({ line }) => line)).to.deep.equal([
        "delete plain 403",
        "patch/status plain 403",
        "delete broken-istio 200",
        "delete broken-linkerd 403",
      ]);
      expect(JSON.stringify(audited[0]?.event)).to.include("cni-repair-meshed-pods");
      // Nobody else is affected: the policies match this ServiceAccount only.
      expect(await outcomeOf(api.deleteNamespacedPod({ namespace, name: "plain" }))).to.deep.equal({
        code: 200,
        message: "",
      });
    });
  });
});
