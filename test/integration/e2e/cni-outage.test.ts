// End to end on a whole cluster (kube-apiserver, controller-manager, scheduler, kwok nodes): node B's CNI agent is
// down while a workload starts, so its pods there come up broken; cni-repair holds them until the agent is
// Ready, then deletes them, their owner recreates them, the scheduler places them, and all end healthy.
// The audit log shows no healthy pod was ever deleted; metrics and Events say the same as the audit log.
import { AppsV1Api, BatchV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { repairEvents } from "../../harness/broken-pods.js";
import type { ControllerProcess } from "../../harness/controller-process.js";
import type { E2eCluster } from "../../harness/e2e-cluster.js";
import { type RepairScope, startRepair } from "../../harness/e2e-controller.js";
import { e2eSuite } from "../../harness/e2e-suite.js";
import { expectEachBrokenPodDeletedOnce, judgeWave, slowestRepair } from "../../harness/repair-audit.js";
import { waitFor } from "../../harness/wait.js";
import { appPods, createDeployment, createJob, createStatefulSet } from "../../harness/workloads.js";

/** From the agent turning Ready to the last broken pod's DELETE: 2 s --cni-agent-min-ready plus slack. */
const REPAIR_BOUND_MS = 15_000;

describe("e2e: a CNI outage on one node, repaired end to end", function () {
  // The first run may build kube-controller-manager, kube-scheduler and kwok (cached afterwards).
  this.timeout(30 * 60_000);
  const suite = e2eSuite();
  let cluster: E2eCluster;
  let controller: ControllerProcess | undefined;

  before(() => {
    cluster = suite.cluster;
  });

  /** A namespace for the workload, one for the agents; node B's agent down, the controller watching. */
  const setUp = async (prefix: string): Promise<RepairScope> => {
    const scope = {
      namespace: await cluster.createNamespace(prefix),
      agentNamespace: await cluster.createNamespace("cni"),
    };
    await cluster.createCniAgents(scope.agentNamespace, ["node-b"]);
    controller = suite.track(await startRepair(cluster.plane.kubeconfigPath, scope));
    return scope;
  };

  /** Every pod on node B broke, the others did not, and the controller holds them all for the agent. */
  const expectHeldOnNodeB = async (scope: RepairScope, expected: number) => {
    const { broken } = await waitFor(
      "the pods on node B to break",
      () => {
        const found = cluster.cni.brokenIn(scope.namespace);
        return found.length >= expected && { broken: found };
      },
      { timeoutMs: 60_000 },
    );
    expect(broken.every((pod) => pod.node === "node-b")).to.equal(true);
    await waitFor(
      "the controller to hold them for the agent",
      async () => {
        return (await controller?.metric("cni_repair_pods_held", { reason: "cni_agent_not_ready" })) === broken.length;
      },
      { timeoutMs: 20_000 },
    );
    // Held through a few validator restarts (each a new resourceVersion): still no DELETE.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(judgeWave(cluster.plane.auditLogPath, scope.namespace, broken).deletes).to.deep.equal([]);
    return broken;
  };

  /** Audit log, metrics and Events agree: exactly the broken pods were deleted, once each, within the bound. */
  const expectRepairedExactly = async (scope: RepairScope, readyAtMs: number) => {
    const broken = cluster.cni.brokenIn(scope.namespace);
    const report = judgeWave(cluster.plane.auditLogPath, scope.namespace, broken, readyAtMs);
    expectEachBrokenPodDeletedOnce(report);
    expect(slowestRepair(report)).to.be.below(REPAIR_BOUND_MS);
    // The gate held until the agent had been Ready for --cni-agent-min-ready (lastTransitionTime has whole
    // seconds, so "Ready since" is up to a second earlier than the test's clock said).
    const readySince = Math.floor(readyAtMs / 1000) * 1000;
    for (const deleted of report.deletes) expect(deleted.atMs).to.be.at.least(readySince + 2_000 - 100);

    const metric = (name: string, labels: Record<string, string>) => controller?.metric(name, labels);
    const succeeded = report.deletes.filter((d) => d.code === 200).length;
    expect(succeeded).to.equal(broken.length);
    expect(await metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })).to.equal(succeeded);
    expect(await metric("cni_repair_pods_repaired_total", { type: "delete", result: "fail" })).to.equal(0);
    expect(await metric("cni_repair_holds_total", { reason: "cni_agent_not_ready" })).to.equal(broken.length);
    expect(await metric("cni_repair_pods_held", { reason: "cni_agent_not_ready" })).to.equal(0);
    expect(await metric("cni_repair_broken_pods", { rule: "istio" })).to.equal(0);

    const names = broken.map((pod) => pod.name).sort();
    const { events } = await waitFor("one Deleted Event per broken pod", async () => {
      const found = await repairEvents(cluster.plane, scope.namespace);
      return found.filter((e) => e.endsWith(":BrokenPodDeleted")).length >= names.length && { events: found };
    });
    const of = (reason: string) =>
      events
        .filter((e) => e.endsWith(`:${reason}`))
        .map((e) => e.split(":")[0])
        .sort();
    expect(of("BrokenPodDeleted")).to.deep.equal(names);
    expect(of("BrokenPodHeld")).to.deep.equal(names);
    expect(events.length, "no other Events").to.equal(2 * names.length);
    expect((await controller?.get("/healthz"))?.status).to.equal(200);
    expect(cluster.cni.errors, "the CNI simulator's failed writes").to.deep.equal([]);
    cluster.assertComponentsRunning();
  };

  it("Deployment, 20 replicas over 3 nodes: node B's pods held, then replaced; all 20 end healthy", async () => {
    const scope = await setUp("deploy");
    await createDeployment(cluster.plane.kubeConfig().makeApiClient(AppsV1Api), scope.namespace, "web", 20);
    // Spread evenly (max skew 1): node B gets 6 or 7 of the 20.
    const { pods: placed } = await waitFor(
      "20 pods with a sandbox",
      async () => {
        const { pods } = await appPods(cluster.api, scope.namespace, "web");
        return pods.filter((p) => p.metadata?.annotations?.["e2e.cni-repair.test/sandbox"]).length === 20 && { pods };
      },
      { timeoutMs: 60_000 },
    );
    // Counted from the placement, not from the simulator: a pod's failure status may still be on its way.
    const onB = placed.filter((pod) => pod.spec?.nodeName === "node-b").length;
    expect(onB).to.be.within(6, 7);
    await expectHeldOnNodeB(scope, onB);

    const readyAtMs = Date.now();
    await cluster.setCniAgentReady(scope.agentNamespace, "node-b");
    const { pods: final } = await waitFor(
      "all 20 replicas healthy, none of them broken",
      async () => {
        const { pods, healthy } = await appPods(cluster.api, scope.namespace, "web");
        return pods.length === 20 && healthy === 20 && { pods };
      },
      { timeoutMs: 60_000 },
    );
    expect(final.every((pod) => cluster.cni.healthy.has(pod.metadata?.uid ?? ""))).to.equal(true);
    // The scheduler placed the replacements where their predecessors were missing: even again.
    for (const node of cluster.nodes) {
      expect(final.filter((pod) => pod.spec?.nodeName === node).length, node).to.be.within(6, 7);
    }
    await expectRepairedExactly(scope, readyAtMs);
  });

  it("StatefulSet: same-name replacements; preconditions name the old UID, the new pod is never touched", async () => {
    const scope = await setUp("sts");
    await createStatefulSet(cluster.plane.kubeConfig().makeApiClient(AppsV1Api), scope.namespace, "db", 6);
    const broken = await expectHeldOnNodeB(scope, 2);

    const readyAtMs = Date.now();
    await cluster.setCniAgentReady(scope.agentNamespace, "node-b");
    const { pods: final } = await waitFor(
      "all 6 replicas healthy",
      async () => {
        const { pods, healthy } = await appPods(cluster.api, scope.namespace, "db");
        return pods.length === 6 && healthy === 6 && { pods };
      },
      { timeoutMs: 60_000 },
    );
    // Same names, new UIDs, and every DELETE carried an old UID as its precondition.
    const byName = new Map(final.map((pod) => [pod.metadata?.name, pod.metadata?.uid]));
    for (const old of broken) {
      expect(byName.get(old.name), `replacement of ${old.name}`).to.be.a("string").and.not.equal(old.uid);
    }
    const report = judgeWave(cluster.plane.auditLogPath, scope.namespace, broken, readyAtMs);
    const newUids = new Set(final.map((pod) => pod.metadata?.uid));
    expect(report.deletes.filter((d) => newUids.has(d.uid))).to.deep.equal([]);
    await expectRepairedExactly(scope, readyAtMs);
  });

  it("Job with restartPolicy Never: the Failed pod is reported and held as terminal, never deleted; the Job completes", async () => {
    const scope = await setUp("job");
    const batch = cluster.plane.kubeConfig().makeApiClient(BatchV1Api);
    await createJob(batch, scope.namespace, "migrate", "node-b");
    // The kubelet marks a Never pod whose init container failed as Failed at once: a finished pod.
    const { failed } = await waitFor(
      "the Job's pod to fail its validator",
      () => {
        const [pod, ...others] = cluster.cni.brokenIn(scope.namespace);
        return pod !== undefined && others.length === 0 && { failed: pod };
      },
      { timeoutMs: 60_000 },
    );
    expect(failed.restartPolicy).to.equal("Never");
    await waitFor(
      "the controller to detect and hold it",
      async () => {
        return (await controller?.metric("cni_repair_holds_total", { reason: "terminal" })) === 1;
      },
      { timeoutMs: 20_000 },
    );
    expect(await controller?.metric("cni_repair_detections_total", { rule: "istio" })).to.be.at.least(1);

    // The Job controller replaces its failed pod itself (after its own back-off); with the agent Ready the
    // replacement runs and the Job completes.
    await cluster.setCniAgentReady(scope.agentNamespace, "node-b");
    await waitFor(
      "the Job to complete",
      async () => {
        const job = await batch.readNamespacedJob({ namespace: scope.namespace, name: "migrate" });
        return (job.status?.succeeded ?? 0) === 1;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );

    const report = judgeWave(cluster.plane.auditLogPath, scope.namespace, cluster.cni.brokenIn(scope.namespace));
    expect(report.deletes, "no DELETE of a finished pod").to.deep.equal([]);
    expect(await controller?.metric("cni_repair_pods_repaired_total", { type: "delete", result: "success" })).to.equal(
      0,
    );
    const { events } = await waitFor("the held Event", async () => {
      const found = await repairEvents(cluster.plane, scope.namespace);
      return found.length > 0 && { events: found };
    });
    expect(events).to.deep.equal([`${failed.name}:BrokenPodHeld`]);
  });
});
