// End to end on a real node (kubelet + containerd + runc, the pods' network by the standard CNI plugins and the
// tests' mesh plugin chained after them): a Deployment's pods start while the node's mesh CNI agent is not
// Ready, so their sandboxes get no redirect rule and their validators fail for real and crash-loop; cni-repair
// holds them until the agent's real readiness probe has passed for --cni-agent-min-ready, then deletes them; the
// ReplicaSet replaces them, the scheduler places them, and the replacements' validators pass. Ground truth: the
// API server's audit log, and the kubelet's own view (container IDs, exit codes, restart counts in pod status)
// and the mesh plugin's record of which sandbox got the rule.

import { readFileSync } from "node:fs";
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { expect } from "chai";
import { auditedActions, deniedBy, podActions, policyInForce } from "../../harness/admission.js";
import { controllerDeletes, nodeWrites, podBindings, podRequests, receivedAtMs } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import type { BrokenPodRecord } from "../../harness/cni-simulator.js";
import { ensureNode } from "../../harness/controller-pod.js";
import type { ControllerProcess } from "../../harness/controller-process.js";
import { startRepair } from "../../harness/e2e-controller.js";
import { metricValue } from "../../harness/metrics-text.js";
import { controllerContainer, INSTALL } from "../../harness/overlays.js";
import { agentDaemonSet, meshedPodSpec, meshedPodTemplate, meshMark } from "../../harness/real-node/mesh-workloads.js";
import { KUBELET_SYSCTLS } from "../../harness/real-node/node-cleanup.js";
import { installPerNode, removeInstalled } from "../../harness/real-node/per-node-install.js";
import { RealNodeCluster } from "../../harness/real-node/real-node-cluster.js";
import { expectEachBrokenPodDeletedOnce, judgeWave } from "../../harness/repair-audit.js";
import { waitFor } from "../../harness/wait.js";
import { appPods, isHealthy } from "../../harness/workloads.js";

const REPLICAS = 4;
const PER_NODE_REPLICAS = 3;
const MIN_READY_MS = 2_000;
const VALIDATOR = "istio-validation";
const STARTUP_TAINT = { key: "cni.istio.io/not-ready", effect: "NoSchedule" };
/** The per-node overlay sets no --cni-agent-min-ready: the flag's default, 10 s, applies (a literal, so that a
 * default changed by mistake fails here instead of moving the expectation with it). */
const SHIPPED_MIN_READY_MS = 10_000;

/** The validator's last failure as the kubelet reported it: the terminated state with exit code 126, if any. */
function validatorFailure(pod: V1Pod) {
  const status = pod.status?.initContainerStatuses?.find((s) => s.name === VALIDATOR);
  const failed = [status?.state?.terminated, status?.lastState?.terminated].find((t) => t?.exitCode === 126);
  return failed ? { restarts: status?.restartCount ?? 0, containerId: failed.containerID ?? "" } : undefined;
}

const brokenRecord = (pod: V1Pod, atMs: number): BrokenPodRecord => ({
  namespace: pod.metadata?.namespace ?? "",
  name: pod.metadata?.name ?? "",
  uid: pod.metadata?.uid ?? "",
  node: pod.spec?.nodeName ?? "",
  brokenAtMs: atMs,
  restartPolicy: pod.spec?.restartPolicy ?? "Always",
});

/**
 * The race: the node's mesh agent down (its DaemonSet in a namespace of its own), then a Deployment of the app in
 * another, whose pods' sandboxes get no redirect rule.
 */
async function raceWithAgentDown(
  cluster: RealNodeCluster,
  app: string,
  replicas: number,
): Promise<{ agentNamespace: string; namespace: string }> {
  const { apps, node } = cluster;
  const agentNamespace = await cluster.createNamespace("cni");
  const namespace = await cluster.createNamespace(app);
  node.setMeshAgentReady(false);
  await apps.createNamespacedDaemonSet({ namespace: agentNamespace, body: agentDaemonSet(node) });
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name: app },
      spec: { replicas, selector: { matchLabels: { app } }, template: meshedPodTemplate(node, app) },
    },
  });
  return { agentNamespace, namespace };
}

/** Waits until `count` pods of the app have a validator that failed and was restarted (a crash loop); returns them. */
async function crashLooping(
  cluster: RealNodeCluster,
  namespace: string,
  app: string,
  count: number,
): Promise<BrokenPodRecord[]> {
  const { looping } = await waitFor(
    `the ${count} ${app} pods' validators to fail and restart`,
    async () => {
      cluster.assertRunning();
      const { pods } = await appPods(cluster.api, namespace, app);
      const found = pods.filter((pod) => (validatorFailure(pod)?.restarts ?? 0) >= 1);
      return found.length === count && { looping: found };
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  return looping.map((pod) => brokenRecord(pod, Date.now()));
}

/** Waits until the app has exactly `count` pods, all healthy and none of them one of the broken ones. */
async function healthyReplacements(
  cluster: RealNodeCluster,
  namespace: string,
  app: string,
  broken: readonly BrokenPodRecord[],
): Promise<V1Pod[]> {
  const { fresh } = await waitFor(
    `${broken.length} healthy replacements`,
    async () => {
      cluster.assertRunning();
      const { pods } = await appPods(cluster.api, namespace, app);
      const found = pods.filter((pod) => isHealthy(pod) && !broken.some((b) => b.uid === pod.metadata?.uid));
      return found.length === broken.length && pods.length === broken.length && { fresh: found };
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
  return fresh;
}

/** The kubelet's view of each pod: its validator passed on its first run (exit 0, no restart) and the app runs. */
function expectPassedFirstRun(pods: readonly V1Pod[]): void {
  for (const pod of pods) {
    const validator = pod.status?.initContainerStatuses?.find((s) => s.name === VALIDATOR);
    expect(validator?.state?.terminated?.exitCode, pod.metadata?.name).to.equal(0);
    expect(validator?.restartCount, pod.metadata?.name).to.equal(0);
    expect(pod.status?.containerStatuses?.[0]?.state?.running, pod.metadata?.name).to.not.equal(undefined);
  }
}

/** When the kubelet last reported the agent pod of the namespace Ready (its probe), to the second. */
async function agentReadySince(api: CoreV1Api, agentNamespace: string): Promise<number> {
  const [agent] = (await api.listNamespacedPod({ namespace: agentNamespace })).items;
  const readyCondition = agent?.status?.conditions?.find((c) => c.type === "Ready");
  expect(readyCondition?.status, "the agent's Ready condition").to.equal("True");
  return new Date(readyCondition?.lastTransitionTime ?? 0).getTime();
}

describe("e2e on a real node: the CNI race, broken and repaired for real", function () {
  // The first run may build the kubelet (and kube-controller-manager, kube-scheduler) and the test images.
  this.timeout(30 * 60_000);
  let cluster: RealNodeCluster | undefined;
  let controller: ControllerProcess | undefined;
  let perNodeInstalled = false;

  const sysctls = () => KUBELET_SYSCTLS.map((key) => `${key}=${readFileSync(`/proc/sys/${key}`, "utf8").trim()}`);
  let sysctlsBefore: string[] = [];

  before(async () => {
    sysctlsBefore = sysctls();
    cluster = await RealNodeCluster.start();
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed") {
      console.log(controller?.output());
      console.log(cluster?.logTails());
    }
    if (perNodeInstalled && cluster) await removeInstalled(cluster);
    perNodeInstalled = false;
    if (!controller) return;
    const code = await controller.stop();
    controller = undefined;
    expect(code, "cni-repair exit code on SIGTERM").to.equal(0);
  });
  after(async function () {
    this.timeout(120_000);
    await cluster?.stop();
    // Two kubelets ran at once; the machine's kernel settings are back as they were before the first.
    expect(sysctls(), "kernel settings after the nodes stopped").to.deep.equal(sysctlsBefore);
  });

  it("per-node: cni-repair as the per-node overlay's DaemonSet runs it, its ServiceAccount held by the shipped admission policies, repairs only its own node's pods", async () => {
    if (!cluster) throw new Error("no cluster");
    const { api, node, plane } = cluster;
    const { agentNamespace, namespace } = await raceWithAgentDown(cluster, "own", PER_NODE_REPLICAS);
    // A second node with no kubelet and no agent, and a meshed pod bound to it whose status says its validator
    // crash-loops: broken, but not this node's agent's to repair.
    const otherNode = `${namespace}-other`;
    await ensureNode(plane, otherNode);
    await createPodInState(api, { namespace, name: "elsewhere", nodeName: otherNode });
    const broken = await crashLooping(cluster, namespace, "own", PER_NODE_REPLICAS);

    // The shipped per-node install: its image (make image) in the node's containerd under the name the DaemonSet
    // gives, then the rendered overlay applied as is. The DaemonSet controller places a pod on each node.
    const importStartedMs = Date.now();
    const rendered = await installPerNode(cluster);
    perNodeInstalled = true;
    const importMs = Date.now() - importStartedMs;
    const ownAgent = await waitFor(
      `cni-repair's pod on ${node.name} to be Ready`,
      async () => {
        cluster?.assertRunning();
        const pods = await api.listNamespacedPod({
          namespace: INSTALL.namespace,
          fieldSelector: `spec.nodeName=${node.name}`,
        });
        const pod = pods.items[0];
        const ready = pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
        return ready ? pod : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const metrics = async () => (await fetch(`http://${ownAgent.status?.podIP}:8080/metrics`)).text();
    expect(controllerContainer(rendered).image).to.equal(ownAgent.spec?.containers[0]?.image);

    // The token the kubelet projected into that pod names its node: the own-node policy refuses it a pod elsewhere.
    const token = node.projectedToken(ownAgent.metadata?.uid ?? "");
    await policyInForce(() => podActions(plane, token, namespace).remove("elsewhere", true));
    const refused = await podActions(plane, token, namespace).remove("elsewhere", true);
    expect(refused.message).to.include(deniedBy("cni-repair-own-node"));
    expect(refused.message).to.include(
      `the per-node cni-repair of node ${node.name} may not delete or relabel pod ${namespace}/elsewhere on node ${otherNode}`,
    );

    await waitFor(
      "cni-repair to hold its node's broken pods for the agent",
      async () =>
        metricValue(await metrics(), "cni_repair_pods_held", { reason: "cni_agent_not_ready" }) === broken.length,
      { timeoutMs: 30_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(
      auditedActions(plane, namespace).map(({ line }) => line),
      "writes before the agent was Ready",
    ).to.deep.equal([]);

    const switchedAtMs = Date.now();
    node.setMeshAgentReady(true);
    const replacements = await healthyReplacements(cluster, namespace, "own", broken);
    const allRunningMs = Date.now() - switchedAtMs;
    const agentReadyMs = await agentReadySince(api, agentNamespace);

    // The API server's record of the ServiceAccount's writes: one DELETE per broken pod of its node, each after the
    // agent had been Ready for the shipped min-ready; nothing at all on the other node's pod.
    const writes = auditedActions(plane, namespace);
    expect(writes.map(({ line }) => line).sort()).to.deep.equal(broken.map((pod) => `delete ${pod.name} 200`).sort());
    const report = judgeWave(plane.auditLogPath, namespace, broken, agentReadyMs);
    expectEachBrokenPodDeletedOnce(report);
    for (const deleted of report.deletes)
      expect(deleted.atMs).to.be.at.least(agentReadyMs + SHIPPED_MIN_READY_MS - 100);
    // Not even a read: every request of the ServiceAccount naming that pod is one of this test's dry runs.
    const serviceAccount = `system:serviceaccount:${INSTALL.namespace}:${INSTALL.serviceAccount}`;
    const onOtherNode = podRequests(plane.auditLogPath, namespace).filter(
      (e) => e.objectRef?.name === "elsewhere" && e.user?.username === serviceAccount,
    );
    expect(onOtherNode.filter((e) => !e.requestURI.includes("dryRun=All")).map((e) => e.verb)).to.deep.equal([]);
    const elsewhere = await api.readNamespacedPod({ namespace, name: "elsewhere" });
    expect(elsewhere.metadata?.deletionTimestamp, "the other node's pod").to.equal(undefined);

    // The kubelet's view: the replacements' validators passed at once; cni-repair's own pod never restarted.
    expectPassedFirstRun(replacements);
    const own = await api.readNamespacedPod({ namespace: INSTALL.namespace, name: ownAgent.metadata?.name ?? "" });
    expect(own.status?.containerStatuses?.[0]?.restartCount, "cni-repair's restarts").to.equal(0);
    const lastDeleteMs = Math.max(...report.deletes.map((d) => d.atMs));
    console.log(
      `      per-node: ${broken.length} broken on ${node.name}, ${report.deletes.length} deleted by its DaemonSet pod, ` +
        `0 requests on the other node's pod (${onOtherNode.length} dry runs with its token: 403); image import + install ${importMs} ms; ` +
        `agent switched on -> all Running: ${allRunningMs} ms (agent Ready at +${agentReadyMs - switchedAtMs} ms, ` +
        `last DELETE at +${lastDeleteMs - switchedAtMs} ms)`,
    );
  });

  it(`${REPLICAS} pods broken by the race crash-loop, are held until the agent is Ready, then replaced by pods that pass validation`, async () => {
    if (!cluster) throw new Error("no cluster");
    const { api, node, plane } = cluster;
    const { agentNamespace, namespace } = await raceWithAgentDown(cluster, "web", REPLICAS);
    // A bare restartPolicy Never pod broken the same way: the kubelet fails it for good; nothing may delete it.
    await api.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "once", ...meshMark("istio", { app: "once" }) },
        spec: meshedPodSpec(node, { restartPolicy: "Never" }),
      },
    });

    // Broken for real: every validator exited 126 and the kubelet restarted it at least once (crash loop).
    const broken = await crashLooping(cluster, namespace, "web", REPLICAS);
    await waitFor(
      "the Never pod to fail on its validator",
      async () => {
        const once = await api.readNamespacedPod({ namespace, name: "once" });
        return once.status?.phase === "Failed" && validatorFailure(once) !== undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const sandboxes = node.meshRecords().filter((r) => r.namespace === namespace);
    expect(
      sandboxes.every((r) => !r.redirected),
      "no sandbox got the rule while the agent was down",
    ).to.equal(true);

    controller = await startRepair(plane.kubeconfigPath, { namespace, agentNamespace });
    await waitFor(
      "cni-repair to hold the broken pods for the agent",
      async () => (await controller?.metric("cni_repair_pods_held", { reason: "cni_agent_not_ready" })) === REPLICAS,
      { timeoutMs: 30_000 },
    );
    // Held through validator restarts while the agent is down: no DELETE at all.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(
      judgeWave(plane.auditLogPath, namespace, broken).deletes,
      "DELETEs before the agent was Ready",
    ).to.deep.equal([]);

    const switchedAtMs = Date.now();
    node.setMeshAgentReady(true);
    const final = await healthyReplacements(cluster, namespace, "web", broken);
    const allRunningMs = Date.now() - switchedAtMs;
    const agentReadyMs = await agentReadySince(api, agentNamespace);

    const report = judgeWave(plane.auditLogPath, namespace, broken, agentReadyMs);
    expectEachBrokenPodDeletedOnce(report);
    // lastTransitionTime has whole seconds: the agent was Ready up to 1 s before it says.
    for (const deleted of report.deletes) expect(deleted.atMs).to.be.at.least(agentReadyMs + MIN_READY_MS - 100);
    expect(
      report.deletes.some((d) => d.name === "once"),
      "the Never pod deleted",
    ).to.equal(false);

    // The kubelet's view of the replacements: the validator passed on its first run, the app runs.
    expectPassedFirstRun(final);
    // And the mesh plugin's: every replacement's sandbox got the rule.
    const redirected = new Set(
      node
        .meshRecords()
        .filter((r) => r.redirected)
        .map((r) => r.pod),
    );
    for (const pod of final) expect(redirected.has(pod.metadata?.name ?? ""), pod.metadata?.name).to.equal(true);
    console.log(
      `      ${broken.length} broken, ${report.deletes.filter((d) => d.code === 200).length} deleted, 0 wrong; ` +
        `agent switched on -> all ${REPLICAS} replacements Running: ${allRunningMs} ms ` +
        `(agent Ready at +${agentReadyMs - switchedAtMs} ms, last DELETE at +${Math.max(...report.deletes.map((d) => d.atMs)) - switchedAtMs} ms)`,
    );
  });

  it("a node registering with the startup taint (--register-with-taints) gets no pod before cni-repair lifts it, and none breaks", async () => {
    if (!cluster) throw new Error("no cluster");
    const { api, apps, plane } = cluster;
    const agentNamespace = await cluster.createNamespace("cni");
    const namespace = await cluster.createNamespace("pool");
    controller = await startRepair(plane.kubeconfigPath, { namespace, agentNamespace }, [
      "--startup-taint=bootstrap-only",
    ]);
    // A new node: its kubelet registers it tainted; its agent (not Ready yet) is the first pod there.
    const node = await cluster.addNode({ registerWithTaints: [STARTUP_TAINT] });
    await apps.createNamespacedDaemonSet({ namespace: agentNamespace, body: agentDaemonSet(node) });
    const template = meshedPodTemplate(node, "pool");
    await apps.createNamespacedDeployment({
      namespace,
      body: { metadata: { name: "pool" }, spec: { replicas: 2, selector: { matchLabels: { app: "pool" } }, template } },
    });
    await waitFor(
      "cni-repair to hold the taint for the agent",
      async () =>
        (await controller?.metric("cni_repair_startup_taint_held_nodes", { reason: "agent_not_ready" })) === 1,
      { timeoutMs: 60_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(podBindings(plane.auditLogPath, namespace), "pods bound while tainted").to.deep.equal([]);

    node.setMeshAgentReady(true);
    const { pods: final } = await waitFor(
      "2 healthy pods on the new node",
      async () => {
        cluster?.assertRunning();
        const { pods, healthy } = await appPods(api, namespace, "pool");
        return pods.length === 2 && healthy === 2 && { pods };
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    const removals = nodeWrites(plane.auditLogPath, node.name).filter(
      (e) => e.userAgent?.startsWith("cni-repair/") && e.responseStatus?.code === 200,
    );
    expect(removals, "one PATCH of the node by cni-repair").to.have.length(1);
    const removedAt = removals[0] ? receivedAtMs(removals[0]) : Number.NaN;
    const bindings = podBindings(plane.auditLogPath, namespace);
    expect(
      bindings.filter((b) => b.atMs < removedAt),
      "pods bound before the taint was removed",
    ).to.deep.equal([]);
    expect(bindings.map((b) => b.node)).to.deep.equal([node.name, node.name]);
    // None broke: each validator passed on its first run, as the kubelet reports it.
    expectPassedFirstRun(final);
    expect(controllerDeletes(plane.auditLogPath, namespace)).to.deep.equal([]);
    const taints = (await api.readNode({ name: node.name })).spec?.taints ?? [];
    expect(taints.map((t) => t.key)).to.not.include(STARTUP_TAINT.key);
    console.log(`      startup taint: 0 pods bound before its removal, 2 bound after, 0 broken`);
  });

  it("a pod whose validator recovers by itself (the agent repaired it in place before the next retry) is not deleted", async () => {
    if (!cluster) throw new Error("no cluster");
    const { api, node, plane } = cluster;
    const agentNamespace = await cluster.createNamespace("cni");
    const namespace = await cluster.createNamespace("heal");
    node.setMeshAgentReady(false);
    const { apps } = cluster;
    await apps.createNamespacedDaemonSet({ namespace: agentNamespace, body: agentDaemonSet(node) });
    await api.createNamespacedPod({
      namespace,
      body: { metadata: { name: "heals", ...meshMark("istio", { app: "heals" }) }, spec: meshedPodSpec(node) },
    });
    await waitFor(
      "its validator to fail once",
      async () => validatorFailure(await api.readNamespacedPod({ namespace, name: "heals" })) !== undefined,
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    // A long min-ready: the kubelet's next retry (back-off 10 s) comes well before cni-repair would act.
    controller = await startRepair(plane.kubeconfigPath, { namespace, agentNamespace }, ["--cni-agent-min-ready=60s"]);
    node.setMeshAgentReady(true);
    expect(node.repairInPlace(["heals"]), "sandboxes repaired in place").to.be.at.least(1);
    const healed = await waitFor(
      "the pod to pass validation on a retry and run",
      async () => {
        const pod = await api.readNamespacedPod({ namespace, name: "heals" });
        return isHealthy(pod) ? pod : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    const validator = healed.status?.initContainerStatuses?.find((s) => s.name === VALIDATOR);
    expect(validator?.restartCount, "the validator's retries").to.be.at.least(1);
    expect(validator?.state?.terminated?.exitCode).to.equal(0);
    await waitFor(
      "cni-repair to see it healthy",
      async () => (await controller?.metric("cni_repair_broken_pods", { rule: "istio" })) === 0,
      { timeoutMs: 20_000 },
    );
    expect(controllerDeletes(plane.auditLogPath, namespace), "DELETEs of the pod that healed").to.deep.equal([]);
    console.log(`      healed in place: validator passed after ${validator?.restartCount} restart(s), not deleted`);
  });
});
