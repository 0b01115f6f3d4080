// The controller as users run it (its own process, real API server) in the default delete mode.
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { statusOf } from "../../harness/api-errors.js";
import { loggedControllerDeletes, podRequests } from "../../harness/audit-log.js";
import { createPodInState, repairEvents } from "../../harness/broken-pods.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "./start.js";

describe("controller in delete mode", () => {
  const t = controllerTest();
  let api: CoreV1Api;
  let namespace: string;

  beforeEach(async () => {
    ({ api, namespace } = t);
  });

  const isMarkedForDeletion = async (name: string) =>
    (await api.readNamespacedPod({ namespace, name })).metadata?.deletionTimestamp !== undefined;
  const loggedDeletes = (count: number) => loggedControllerDeletes(controlPlane().auditLogPath, namespace, count);

  it("deletes an Istio pod in Init:CrashLoopBackOff within 2 s, with UID and resourceVersion preconditions", async () => {
    await t.start();
    const broken = await createPodInState(api, { namespace, name: "crashloop" });

    await waitFor("the broken pod to be deleted", () => isMarkedForDeletion("crashloop"), { timeoutMs: 2_000 });

    const [deleteRequest, ...others] = await loggedDeletes(1);
    expect(others).to.deep.equal([]);
    expect(deleteRequest?.responseStatus?.code).to.equal(200);
    expect(deleteRequest?.requestObject?.preconditions).to.deep.equal({
      uid: broken.metadata?.uid,
      resourceVersion: broken.metadata?.resourceVersion,
    });
    const statusWrite = podRequests(controlPlane().auditLogPath, namespace).find(
      (e) => e.objectRef?.subresource === "status",
    );
    const latencyMs = Date.parse(deleteRequest?.stageTimestamp ?? "") - Date.parse(statusWrite?.stageTimestamp ?? "");
    expect(latencyMs).to.be.lessThan(2_000);

    await waitFor(
      "the success metric",
      async () =>
        (await t.controller.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })) === 1,
    );
    expect(await t.controller.metric("cni_repair_detections_total", { rule: "istio" })).to.equal(1);
    await waitFor("the Event", async () =>
      (await repairEvents(controlPlane(), namespace)).includes("crashloop:BrokenPodDeleted"),
    );
    const decision = t.controller.logsWith("repaired broken pod", { pod: "crashloop" })[0];
    expect(decision).to.include({
      namespace,
      uid: broken.metadata?.uid,
      rule: "istio",
      action: "delete",
      result: "success",
    });
    expect(decision?.reason).to.equal("istio-validation exited 126 (lastState)");
  });

  it("deletes a restartPolicy Never pod whose validator failed (state.terminated), but only reports it once Failed", async () => {
    await t.start();
    await createPodInState(
      api,
      { namespace, name: "never-running", restartPolicy: "Never" },
      { validator: { kind: "failed", exitCode: 126 }, phase: "Running" },
    );
    await createPodInState(
      api,
      { namespace, name: "never-failed", restartPolicy: "Never" },
      { validator: { kind: "failed", exitCode: 126 }, phase: "Failed" },
    );

    await waitFor("the running pod to be deleted", () => isMarkedForDeletion("never-running"));
    await waitFor("the Event for the finished pod", async () =>
      (await repairEvents(controlPlane(), namespace)).includes("never-failed:BrokenPodHeld"),
    );
    expect(await t.controller.metric("cni_repair_pods_held", { reason: "terminal" })).to.equal(1);
    expect(await isMarkedForDeletion("never-failed")).to.equal(false);
    expect((await loggedDeletes(1)).map((e) => e.objectRef?.name)).to.deep.equal(["never-running"]);
    expect(await t.controller.metric("cni_repair_broken_pods", { rule: "istio" })).to.equal(1);
  });

  it("leaves alone: a validator that exited 0, another init container's 126, a pod without the marker, a terminating pod", async () => {
    // Terminating first: a scheduled pod with no kubelet keeps its deletionTimestamp for the grace period.
    await createPodInState(api, { namespace, name: "terminating" }, { phase: "Running" });
    await api.deleteNamespacedPod({ namespace, name: "terminating" });
    await t.start();
    await createPodInState(api, { namespace, name: "validator-ok" }, { validator: { kind: "succeeded" } });
    await createPodInState(api, { namespace, name: "other-init" }, { container: "setup-db" });
    await createPodInState(api, { namespace, name: "no-marker", mesh: "none" }, { container: "istio-validation" });
    // A broken pod created last: once it is repaired, the controller has seen every pod before it.
    await createPodInState(api, { namespace, name: "sentinel" });

    await waitFor("the sentinel to be deleted", () => isMarkedForDeletion("sentinel"));
    expect((await loggedDeletes(1)).map((e) => e.objectRef?.name)).to.deep.equal(["sentinel"]);
    for (const name of ["validator-ok", "other-init", "no-marker"]) {
      expect(await isMarkedForDeletion(name), name).to.equal(false);
    }
  });

  it("repairs a pod that was already broken when it started (the initial list)", async () => {
    const broken = await createPodInState(api, { namespace, name: "before-start" });
    await t.start();
    await waitFor("the pod to be deleted", () => isMarkedForDeletion("before-start"));
    expect((await loggedDeletes(1))[0]?.requestObject?.preconditions).to.deep.equal({
      uid: broken.metadata?.uid,
      resourceVersion: broken.metadata?.resourceVersion,
    });
  });

  it("repairs a Linkerd pod with --preset linkerd and leaves it alone with --preset istio", async () => {
    await t.start(["--preset=istio"]);
    await createPodInState(api, { namespace, name: "linkerd-pod", mesh: "linkerd" });
    await createPodInState(api, { namespace, name: "sentinel" });
    await waitFor("the istio sentinel to be deleted", () => isMarkedForDeletion("sentinel"));
    expect(await isMarkedForDeletion("linkerd-pod")).to.equal(false);
    expect(await t.controller.stop()).to.equal(0);

    await t.start(["--preset=linkerd"]);
    await waitFor("the linkerd pod to be deleted", () => isMarkedForDeletion("linkerd-pod"));
    expect(await t.controller.metric("cni_repair_detections_total", { rule: "linkerd" })).to.equal(1);
  });

  it("leaves a broken pod on another node alone with --node-name", async () => {
    await t.start(["--node-name=n1"]);
    await createPodInState(api, { namespace, name: "on-n2", nodeName: "n2" });
    await createPodInState(api, { namespace, name: "on-n1", nodeName: "n1" });
    await waitFor("the pod on n1 to be deleted", () => isMarkedForDeletion("on-n1"));
    expect(await isMarkedForDeletion("on-n2")).to.equal(false);
    // The scope is server-side: the pod on n2 never reached the cache.
    expect(await t.controller.metric("cni_repair_cache_pods")).to.equal(1);
    expect(await statusOf(api.readNamespacedPod({ namespace, name: "on-n2" }))).to.equal(200);
  });
});
