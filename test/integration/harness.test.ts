// Proves the test control plane is a real API server: preconditions, pods/status, graceful delete, watch order.
import { CoreV1Api, Watch } from "@kubernetes/client-node";
import { expect } from "chai";
import { statusOf } from "../harness/api-errors.js";
import { createTestNamespace } from "../harness/namespaces.js";
import { meshedPod, validatorStatus, writePodStatus } from "../harness/pod-fixtures.js";
import { controlPlane } from "../harness/shared-control-plane.js";
import { waitFor } from "../harness/wait.js";

describe("test control plane", () => {
  it("enforces delete preconditions, keeps pods/status writes, and streams watch events in order", async () => {
    const kc = controlPlane().kubeConfig();
    const api = kc.makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api);

    const seen: string[] = [];
    const abort = await new Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/pods`,
      {},
      (type: string) => seen.push(type),
      () => {},
    );
    try {
      const created = await api.createNamespacedPod({
        namespace,
        body: meshedPod({ name: "p", namespace, nodeName: "n1" }),
      });
      const broken = await writePodStatus(
        api,
        { namespace, name: "p" },
        {
          phase: "Pending",
          initContainerStatuses: [validatorStatus("istio-validation", { kind: "failed", exitCode: 126 })],
        },
      );
      expect(broken.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode).to.equal(126);
      const uid = broken.metadata?.uid ?? "";
      const staleVersion = created.metadata?.resourceVersion ?? "";
      const currentVersion = broken.metadata?.resourceVersion ?? "";
      expect(staleVersion).to.not.equal(currentVersion);

      const del = (preconditions: { uid: string; resourceVersion: string }, gracePeriodSeconds?: number) =>
        api.deleteNamespacedPod({
          namespace,
          name: "p",
          body: { preconditions, ...(gracePeriodSeconds !== undefined && { gracePeriodSeconds }) },
        });

      expect(await statusOf(del({ uid, resourceVersion: staleVersion }))).to.equal(409);
      expect(
        await statusOf(del({ uid: "5f0c1a52-0000-4000-8000-000000000000", resourceVersion: currentVersion })),
      ).to.equal(409);
      expect(await statusOf(del({ uid, resourceVersion: currentVersion }))).to.equal(200);

      // No kubelet: a scheduled pod is only marked for deletion, with the default grace period.
      const terminating = await api.readNamespacedPod({ namespace, name: "p" });
      expect(terminating.metadata?.deletionTimestamp).to.not.equal(undefined);
      expect(terminating.metadata?.uid).to.equal(uid);

      await api.deleteNamespacedPod({ namespace, name: "p", body: { gracePeriodSeconds: 0 } });
      expect(await statusOf(api.readNamespacedPod({ namespace, name: "p" }))).to.equal(404);

      await waitFor("the DELETED watch event", () => seen.at(-1) === "DELETED");
      expect(seen[0]).to.equal("ADDED");
      // Status write, deletionTimestamp, then the final graceful-delete update before removal.
      expect(seen.slice(1, -1)).to.have.length.greaterThan(0);
      expect(seen.slice(1, -1).every((type) => type === "MODIFIED")).to.equal(true);
      expect(seen.filter((type) => type === "DELETED")).to.have.length(1);
    } finally {
      abort.abort();
    }
  });
});
