// Deletion pacing: 30 broken pods at --max-deletions-per-minute=10 are deleted over about two minutes.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import type { ControllerProcess } from "../../harness/controller-process.js";
import { FakeKubelet } from "../../harness/fake-kubelet.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { startControllerFor } from "../controller/start.js";

describe("deletion rate limit", () => {
  let controller: ControllerProcess | undefined;
  let kubelet: FakeKubelet | undefined;

  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(controller?.output());
    expect(await controller?.stop()).to.equal(0);
    await kubelet?.stop();
  });

  it("spreads 30 deletions at 10 per minute after a burst of 10, holding the rest as rate_limit", async function () {
    this.timeout(300_000);
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api);
    kubelet = await FakeKubelet.start(controlPlane().kubeConfig(), namespace);
    const names = Array.from({ length: 30 }, (_, i) => `paced-${String(i).padStart(2, "0")}`);
    for (const name of names) await createPodInState(api, { namespace, name, owner: { kind: "ReplicaSet", name } });
    // The storm breaker would rightly stop a 30-of-30 wave; this test is about pacing alone.
    controller = await startControllerFor(namespace, [
      "--max-deletions-per-minute=10",
      "--deletion-burst=10",
      "--max-broken-fraction=1",
    ]);

    await waitFor(
      "the held pods",
      async () => (await controller?.metric("cni_repair_pods_held", { reason: "rate_limit" })) === 20,
    );
    const deletedAt = () =>
      controllerDeletes(controlPlane().auditLogPath, namespace)
        .filter((e) => e.responseStatus?.code === 200)
        .map((e) => Date.parse(e.stageTimestamp));
    await waitFor("all 30 deletions", () => deletedAt().length === 30, { timeoutMs: 200_000, intervalMs: 1_000 });

    const times = deletedAt().sort((a, b) => a - b);
    const start = times[0] ?? 0;
    // The burst goes at once; then one token every 6 s.
    expect((times[9] ?? 0) - start).to.be.below(3_000);
    for (let i = 10; i < 30; i++)
      expect((times[i] ?? 0) - (times[i - 1] ?? 0), `gap before #${i}`).to.be.at.least(5_000);
    expect((times[29] ?? 0) - start).to.be.within(115_000, 140_000);
    expect(await controller.metric("cni_repair_holds_total", { reason: "rate_limit" })).to.equal(20);
    expect(await controller.metric("cni_repair_pods_held", { reason: "rate_limit" })).to.equal(0);
  });
});
