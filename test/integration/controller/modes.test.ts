// Label mode and report mode: the pod is marked or reported, never deleted.
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { podRequests } from "../../harness/audit-log.js";
import { createPodInState, repairEvents } from "../../harness/broken-pods.js";
import { validatorStatus, writePodStatus } from "../../harness/pod-fixtures.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "./start.js";

describe("controller in label and report modes", () => {
  const t = controllerTest();
  let api: CoreV1Api;
  let namespace: string;

  beforeEach(async () => {
    ({ api, namespace } = t);
  });

  /** What the controller wrote to pods (its namespaced list and watch are reads, not repairs). */
  const controllerRequests = () =>
    podRequests(controlPlane().auditLogPath, namespace).filter(
      (e) => (e.userAgent ?? "").startsWith("cni-repair/") && !["list", "watch", "get"].includes(e.verb),
    );

  it("label mode labels the pod once through pods/status; the next pass is a skip", async () => {
    await t.start(["--mode=label", "--label-key=example.com/cni-broken", "--label-value=yes"]);
    await createPodInState(api, { namespace, name: "to-label" });

    await waitFor("the label", async () => {
      const pod = await api.readNamespacedPod({ namespace, name: "to-label" });
      return pod.metadata?.labels?.["example.com/cni-broken"] === "yes";
    });
    // The label itself changes the facts, so the controller looks once more and finds nothing to do.
    await waitFor(
      "the skip",
      async () =>
        (await t.controller.metric("cni_repair_pods_repaired_total", { type: "label", result: "skip" })) === 1,
    );
    expect(await t.controller.metric("cni_repair_pods_repaired_total", { type: "label", result: "success" })).to.equal(
      1,
    );

    const requests = controllerRequests();
    expect(requests.map((e) => `${e.verb} ${e.objectRef?.subresource ?? ""}`)).to.deep.equal(["patch status"]);
    expect(requests[0]?.responseStatus?.code).to.equal(200);
    const pod = await api.readNamespacedPod({ namespace, name: "to-label" });
    expect(pod.metadata?.deletionTimestamp).to.equal(undefined);
    await waitFor("the Event", async () =>
      (await repairEvents(controlPlane(), namespace)).includes("to-label:BrokenPodLabeled"),
    );

    // The label means "broken now": once the validator passes, it comes off again.
    await writePodStatus(
      api,
      { namespace, name: "to-label" },
      { phase: "Running", initContainerStatuses: [validatorStatus("istio-validation", { kind: "succeeded" })] },
    );
    await waitFor("the label to be removed", async () => {
      const healed = await api.readNamespacedPod({ namespace, name: "to-label" });
      return healed.metadata?.labels?.["example.com/cni-broken"] === undefined;
    });
  });

  it("report mode changes nothing: a dry-run delete with preconditions, counted as dry_run", async () => {
    await t.start(["--mode=report"]);
    const broken = await createPodInState(api, { namespace, name: "to-report" });

    await waitFor(
      "the dry_run",
      async () =>
        (await t.controller.metric("cni_repair_pods_repaired_total", { type: "report", result: "dry_run" })) === 1,
    );

    const requests = controllerRequests();
    expect(requests).to.have.length(1);
    expect(requests[0]?.verb).to.equal("delete");
    expect(requests[0]?.requestObject).to.deep.include({
      dryRun: ["All"],
      preconditions: { uid: broken.metadata?.uid, resourceVersion: broken.metadata?.resourceVersion },
    });
    const pod = await api.readNamespacedPod({ namespace, name: "to-report" });
    expect(pod.metadata?.deletionTimestamp).to.equal(undefined);
    expect(pod.metadata?.resourceVersion).to.equal(broken.metadata?.resourceVersion);
    await waitFor("the Event", async () =>
      (await repairEvents(controlPlane(), namespace)).includes("to-report:BrokenPodDetected"),
    );
  });

  it("logs say what happened: broken pods counted at sync, and report mode would delete (no 'repaired')", async () => {
    for (const name of ["a", "b", "c"]) await createPodInState(api, { namespace, name });
    await createPodInState(api, { namespace, name: "fine" }, { validator: { kind: "succeeded" } });
    await t.start(["--mode=report"]);
    await waitFor("the sync line", () => t.controller.logsWith("cache synced; repairing").length === 1);
    expect(t.controller.logsWith("cache synced; repairing")[0]).to.include({ pods: 4, broken: 3 });
    await waitFor("three reports", () => t.controller.logsWith("would delete broken pod").length === 3);
    expect(t.controller.logsWith("would delete broken pod")[0]).to.include({ action: "report", result: "dry_run" });
    expect(t.controller.logsWith("repaired broken pod")).to.deep.equal([]);
  });

  it("--v8-flags-after-sync: set at sync and named in its line, and the controller goes on repairing with them", async () => {
    await createPodInState(api, { namespace, name: "before-sync" });
    await t.start(["--mode=report", "--v8-flags=--no-opt,--no-maglev", "--v8-flags-after-sync=--maglev"]);
    await waitFor("the sync line", () => t.controller.logsWith("cache synced; repairing").length === 1);
    expect(t.controller.logsWith("cache synced; repairing")[0]).to.deep.include({ v8Flags: ["--maglev"] });

    await createPodInState(api, { namespace, name: "after-sync" });
    await waitFor("both reports", () => t.controller.logsWith("would delete broken pod").length === 2);
  });
});
