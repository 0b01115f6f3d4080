// Static pods against the real API server: a broken mirror pod is held `static_pod` and never deleted, however
// often the kubelet re-creates it, with one Event; a broken DaemonSet pod beside it is still deleted.
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState, repairEvents } from "../../harness/broken-pods.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "../controller/start.js";

const MIRROR = "kube-proxy-static-node";

/** A broken mirror pod as the kubelet writes it: the config.mirror annotation and its Node as controller. */
async function createMirrorPod(api: CoreV1Api, namespace: string): Promise<string> {
  const pod = await createPodInState(api, {
    namespace,
    name: MIRROR,
    nodeName: "static-node",
    owner: { kind: "Node", name: "static-node", apiVersion: "v1" },
    annotations: { "kubernetes.io/config.mirror": "5f2c8a0e9d7b" },
  });
  return pod.metadata?.uid ?? "";
}

describe("static pods", () => {
  const t = controllerTest();

  const deletedNames = () =>
    controllerDeletes(controlPlane().auditLogPath, t.namespace).map((e) => e.objectRef?.name ?? "");

  it("a broken mirror pod re-created three times is never deleted, held static_pod, one Event; a DaemonSet pod is deleted", async () => {
    const { api, namespace } = t;
    await t.start();
    await createPodInState(api, {
      namespace,
      name: "cni-agent-like-ds-pod",
      nodeName: "static-node",
      owner: { kind: "DaemonSet", name: "some-agent" },
    });
    const uids = [await createMirrorPod(api, namespace)];
    await waitFor("the DaemonSet pod deleted", () => deletedNames().includes("cni-agent-like-ds-pod"));
    await waitFor(
      "the mirror held",
      async () => (await t.metric("cni_repair_pods_held", { reason: "static_pod" })) === 1,
    );

    // The kubelet replaces its mirror pod (same name, new UID), here three times, each still broken.
    for (let round = 1; round <= 3; round++) {
      await api.deleteNamespacedPod({ namespace, name: MIRROR, body: { gracePeriodSeconds: 0 } });
      await waitFor("the old mirror gone", async () => {
        const list = await api.listNamespacedPod({ namespace, fieldSelector: `metadata.name=${MIRROR}` });
        return list.items.length === 0;
      });
      uids.push(await createMirrorPod(api, namespace));
      await waitFor(
        `hold #${round + 1}`,
        async () => (await t.metric("cni_repair_holds_total", { reason: "static_pod" })) === round + 1,
      );
    }
    expect(new Set(uids).size).to.equal(4);
    expect(await t.metric("cni_repair_pods_held", { reason: "static_pod" })).to.equal(1);
    expect(t.controller.logsWith("broken pod held", { pod: MIRROR, hold: "static_pod" })).to.have.length(4);
    // Give any further Event time to be written before counting.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const events = await repairEvents(controlPlane(), namespace);
    expect(events.filter((event) => event === `${MIRROR}:BrokenPodHeld`)).to.have.length(1);
    expect(deletedNames()).to.deep.equal(["cni-agent-like-ds-pod"]);
  });

  it("label mode labels a broken mirror pod; report mode holds it without a dry-run delete", async () => {
    const { api, namespace } = t;
    await t.start(["--mode=label"]);
    await createMirrorPod(api, namespace);
    await waitFor("the label", async () => {
      const pod = await api.readNamespacedPod({ namespace, name: MIRROR });
      return pod.metadata?.labels?.["cni.istio.io/uninitialized"] === "true";
    });
    expect(await t.controller.stop()).to.equal(0);

    await t.start(["--mode=report"]);
    await waitFor("the hold", async () => (await t.metric("cni_repair_pods_held", { reason: "static_pod" })) === 1);
    expect(await t.metric("cni_repair_pods_repaired_total", { type: "report", result: "dry_run" })).to.equal(0);
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)).to.deep.equal([]);
  });
});
