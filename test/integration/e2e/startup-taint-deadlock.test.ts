// End to end on a real node (kubelet + containerd + runc): a cluster whose every node registered with the startup
// taint (kubelet --register-with-taints cni.istio.io/not-ready:NoSchedule) is not locked by it. cni-repair,
// installed as a user would (helm install of the chart, mode cluster: a Deployment, startupTaint.mode
// bootstrap-only), tolerates the key it manages: its pods are bound to the tainted node and become Ready; once
// Istio's CNI agent there is Ready it removes the taint; only then does a workload pod bind, and its validator
// passes on its first run. Without the chart's toleration its pods stay Pending and the taint stays for good.
// Ground truth: the API server's audit log (bindings, the Node PATCH and who sent it) and the kubelet's pod status.
import type { V1Pod } from "@kubernetes/client-node";
import { expect } from "chai";
import { nodeWrites, podBindings, receivedAtMs } from "../../harness/audit-log.js";
import { chartDir, helm, IMAGE_VALUES, renderChart, setValues } from "../../harness/helm.js";
import { OciLayout } from "../../harness/oci-layout.js";
import { applyNamespace, controllerContainer, INSTALL, uninstall, workloadOf } from "../../harness/overlays.js";
import { agentDaemonSet, meshedPodTemplate } from "../../harness/real-node/mesh-workloads.js";
import { RealNodeCluster } from "../../harness/real-node/real-node-cluster.js";
import { waitFor } from "../../harness/wait.js";
import { appPods } from "../../harness/workloads.js";

const STARTUP_TAINT = { key: "cni.istio.io/not-ready", effect: "NoSchedule" };
const RELEASE = "cni-repair";
const VALUES = { ...IMAGE_VALUES, mode: "cluster", "startupTaint.mode": "bootstrap-only", "cniAgent.minReady": "2s" };
const SERVICE_ACCOUNT = `system:serviceaccount:${INSTALL.namespace}:${INSTALL.serviceAccount}`;

const isReady = (pod: V1Pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");

describe("e2e on a real node: every node registered with the startup taint, cni-repair installed as a Deployment", function () {
  // The first run may build the kubelet (and kube-controller-manager, kube-scheduler), helm and the test images.
  this.timeout(30 * 60_000);
  let cluster: RealNodeCluster | undefined;
  let installed = false;

  before(async () => {
    // The cluster's only node registers tainted: nothing that does not tolerate the key can be scheduled anywhere.
    cluster = await RealNodeCluster.start({ registerWithTaints: [STARTUP_TAINT] });
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(cluster?.logTails());
  });
  after(async function () {
    this.timeout(120_000);
    if (installed && cluster) {
      await helm(["uninstall", RELEASE, "--namespace", INSTALL.namespace, "--ignore-not-found"], {
        plane: cluster.plane,
      });
      await uninstall(cluster.plane);
    }
    await cluster?.stop();
  });

  it("its pods are scheduled on the tainted node, it removes the taint once the agent is Ready, then a workload pod binds", async () => {
    if (!cluster) throw new Error("no cluster");
    const { api, apps, node, plane } = cluster;
    const taintKeys = async () => ((await api.readNode({ name: node.name })).spec?.taints ?? []).map((t) => t.key);
    // The node lifecycle controller lifts node.kubernetes.io/not-ready once the kubelet reports Ready; ours stays.
    await waitFor(
      "the node to carry only the startup taint it registered with",
      async () => (await taintKeys()).join() === STARTUP_TAINT.key,
      { timeoutMs: 60_000, intervalMs: 500 },
    );

    // Istio's CNI agent on the node (it tolerates every taint), not Ready yet; a workload waiting for the node.
    node.setMeshAgentReady(false);
    const agentNamespace = await cluster.createNamespace("cni");
    await apps.createNamespacedDaemonSet({ namespace: agentNamespace, body: agentDaemonSet(node) });
    const namespace = await cluster.createNamespace("app");
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: "web" },
        spec: { replicas: 1, selector: { matchLabels: { app: "web" } }, template: meshedPodTemplate(node, "web") },
      },
    });

    // The chart as a user installs it: its image (make image) in the node's containerd under the name the chart
    // gives it (there is no registry), the namespace applied first, then helm install.
    const rendered = await renderChart("cluster", VALUES);
    expect(workloadOf(rendered).kind).to.equal("Deployment");
    const image = controllerContainer(rendered).image ?? "";
    await node.containerd.importOciLayout(OciLayout.built().dir, image);
    await applyNamespace(plane);
    await helm(["install", RELEASE, chartDir(), "--namespace", INSTALL.namespace, ...setValues(VALUES)], { plane });
    installed = true;

    const { pods: controllers } = await waitFor(
      "cni-repair's pods to be scheduled on the tainted node and turn Ready",
      async () => {
        cluster?.assertRunning();
        const pods = (await api.listNamespacedPod({ namespace: INSTALL.namespace })).items;
        return pods.length > 0 && pods.every((pod) => pod.spec?.nodeName === node.name && isReady(pod)) && { pods };
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    // Ready, with the agent still down: the taint stays and the workload waits, unbound.
    expect(await taintKeys(), "the taint while the agent is not Ready").to.deep.equal([STARTUP_TAINT.key]);
    expect(podBindings(plane.auditLogPath, namespace), "workload pods bound while tainted").to.deep.equal([]);

    const switchedAtMs = Date.now();
    node.setMeshAgentReady(true);
    const { workload } = await waitFor(
      "the workload's pod to bind and run",
      async () => {
        cluster?.assertRunning();
        const { pods, healthy } = await appPods(api, namespace, "web");
        const [pod, ...others] = pods;
        return pod !== undefined && others.length === 0 && healthy === 1 && { workload: pod };
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );

    // The audit log: cni-repair's pods were bound while the node was tainted; its ServiceAccount removed the taint
    // (one PATCH); the workload's pod was bound only after that.
    const removals = nodeWrites(plane.auditLogPath, node.name).filter(
      (e) => e.user?.username === SERVICE_ACCOUNT && e.responseStatus?.code === 200,
    );
    expect(removals, "PATCHes of the node by cni-repair's ServiceAccount").to.have.length(1);
    const removedAtMs = removals[0] ? receivedAtMs(removals[0]) : Number.NaN;
    const controllerBindings = podBindings(plane.auditLogPath, INSTALL.namespace);
    expect(controllerBindings.map((b) => b.node)).to.deep.equal(controllers.map(() => node.name));
    expect(
      controllerBindings.filter((b) => b.atMs >= removedAtMs),
      "cni-repair's pods bound after the taint went (they must have been bound while it was there)",
    ).to.deep.equal([]);
    const workloadBindings = podBindings(plane.auditLogPath, namespace);
    expect(workloadBindings.map((b) => b.node)).to.deep.equal([node.name]);
    expect(workloadBindings[0]?.atMs, "the workload bound after the removal").to.be.at.least(removedAtMs);
    expect(removedAtMs, "the taint removed after the agent was switched on").to.be.at.least(switchedAtMs);
    expect(await taintKeys()).to.deep.equal([]);
    // The kubelet's view: the workload's validator passed on its first run (the agent was Ready before it started).
    const validator = workload?.status?.initContainerStatuses?.find((s) => s.name === "istio-validation");
    expect(validator?.state?.terminated?.exitCode).to.equal(0);
    expect(validator?.restartCount).to.equal(0);
    console.log(
      `      ${controllers.length} cni-repair pods bound to the tainted node ${Math.round((removedAtMs - Math.min(...controllerBindings.map((b) => b.atMs))) / 1000)} s before the taint went; ` +
        `agent switched on -> taint removed: ${removedAtMs - switchedAtMs} ms; workload bound ${(workloadBindings[0]?.atMs ?? 0) - removedAtMs} ms after the removal`,
    );
  });
});
