// The safety guards against the real API server: storm breaker, loop protection, bare pods, CNI agent gate.
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState, repairEvents } from "../../harness/broken-pods.js";
import { agentName, createCniAgent, setCniAgentReady } from "../../harness/cni-agents.js";
import { FakeKubelet } from "../../harness/fake-kubelet.js";
import { validatorStatus, writePodStatus } from "../../harness/pod-fixtures.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "../controller/start.js";

describe("safety guards", () => {
  const t = controllerTest();
  let api: CoreV1Api;
  let namespace: string;
  let kubelet: FakeKubelet;

  beforeEach(async () => {
    ({ api, namespace } = t);
    kubelet = await FakeKubelet.start(controlPlane().kubeConfig(), namespace);
  });

  afterEach(async () => {
    await kubelet.stop();
  });

  const deleted = () =>
    controllerDeletes(controlPlane().auditLogPath, namespace)
      .filter((e) => e.responseStatus?.code === 200)
      .map((e) => e.objectRef?.name ?? "");

  it("storm breaker: 8 of 10 meshed pods broken on a node → nothing deleted; healing below the threshold resumes", async () => {
    const names = Array.from({ length: 10 }, (_, i) => `storm-${i}`);
    for (const [i, name] of names.entries()) {
      await createPodInState(
        api,
        { namespace, name, nodeName: "storm-node" },
        i < 8 ? {} : { validator: { kind: "succeeded" }, phase: "Running" },
      );
    }
    // Started after the storm: the initial list sees all of it at once.
    await t.start();
    await waitFor("8 storm holds", async () => (await t.metric("cni_repair_pods_held", { reason: "storm" })) === 8);
    expect(deleted()).to.deep.equal([]);
    expect(await t.metric("cni_repair_storm_breaker_open", { scope: "node" })).to.equal(1);
    expect(t.controller.logsWith("storm breaker open: holding deletions", { node: "storm-node" })).to.not.be.empty;
    await waitFor("a Warning Event", async () =>
      (await repairEvents(controlPlane(), namespace)).includes("storm-0:BrokenPodHeld"),
    );

    // Three recover by themselves: 5 broken of 10 is no longer more than half, so the rest may be repaired.
    for (const name of names.slice(0, 3)) {
      await writePodStatus(
        api,
        { namespace, name },
        { phase: "Running", initContainerStatuses: [validatorStatus("istio-validation", { kind: "succeeded" })] },
      );
    }
    await waitFor("the 5 still broken to be deleted", () => deleted().length === 5);
    expect(deleted().sort()).to.deep.equal(names.slice(3, 8));
    expect(await t.metric("cni_repair_storm_breaker_open", { scope: "node" })).to.equal(0);
  });

  it("loop protection: a replacement that comes back broken on the same node is deleted only after the backoff", async () => {
    await t.start(["--loop-backoff=4s"]);
    const owner = { kind: "ReplicaSet", name: "looping-5d8c" };
    await createPodInState(api, { namespace, name: "looping-1", nodeName: "loop-node", owner });
    await waitFor("the first delete", () => deleted().length === 1);

    await createPodInState(api, { namespace, name: "looping-2", nodeName: "loop-node", owner });
    await waitFor(
      "the loop hold",
      async () => (await t.metric("cni_repair_pods_held", { reason: "loop_backoff" })) === 1,
    );
    await waitFor("the second delete", () => deleted().length === 2, { timeoutMs: 15_000 });

    const [first, second] = controllerDeletes(controlPlane().auditLogPath, namespace).filter(
      (e) => e.responseStatus?.code === 200,
    );
    const gapMs = Date.parse(second?.stageTimestamp ?? "") - Date.parse(first?.stageTimestamp ?? "");
    expect(gapMs).to.be.at.least(3_900);
    expect(await t.metric("cni_repair_holds_total", { reason: "loop_backoff" })).to.equal(1);
    const events = await repairEvents(controlPlane(), namespace);
    expect(events).to.include("looping-2:BrokenPodHeld");
  });

  it("bare pods are labelled and kept; --delete-bare-pods deletes them", async () => {
    await t.start();
    await createPodInState(api, { namespace, name: "bare", bare: true });
    await waitFor("the label", async () => {
      const pod = await api.readNamespacedPod({ namespace, name: "bare" });
      return pod.metadata?.labels?.["cni.istio.io/uninitialized"] === "true";
    });
    expect(await t.metric("cni_repair_pods_held", { reason: "bare_pod" })).to.equal(1);
    expect(deleted()).to.deep.equal([]);
    expect(await t.controller.stop()).to.equal(0);

    await t.start(["--delete-bare-pods"]);
    await waitFor("the delete", () => deleted().length === 1);
  });

  it("CNI agent gate: pods are held while the node's agent is not Ready, then deleted once it has been Ready long enough", async () => {
    await t.start(["--cni-agent-gate=on", "--cni-agent-min-ready=2s", `--cni-agent-namespace=${namespace}`]);
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "gate-node" });
    await createPodInState(api, { namespace, name: "gated-1", nodeName: "gate-node" });
    await createPodInState(api, { namespace, name: "gated-2", nodeName: "gate-node" });
    await waitFor(
      "2 agent holds",
      async () => (await t.metric("cni_repair_pods_held", { reason: "cni_agent_not_ready" })) === 2,
    );
    expect(deleted()).to.deep.equal([]);

    const readyAt = Date.now();
    await setCniAgentReady(api, { namespace, name: agentName("istio", "gate-node") }, new Date(readyAt));
    await waitFor("both deletes", () => deleted().length === 2, { timeoutMs: 10_000 });
    for (const request of controllerDeletes(controlPlane().auditLogPath, namespace)) {
      const afterReadyMs = Date.parse(request.stageTimestamp) - readyAt;
      // Not before the minimum Ready time (timestamps are whole seconds on the condition), well within 2 s after it.
      expect(afterReadyMs).to.be.within(1_000, 4_000);
    }
    expect(await t.metric("cni_repair_pods_held", { reason: "cni_agent_not_ready" })).to.equal(0);
  });
});
