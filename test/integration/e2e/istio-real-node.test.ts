// End to end on a real node beside the real Istio: Istio's CNI node agent (install-cni, running Istio's repair
// controller), its CNI plugin (istio-cni) and its validator (pilot-agent's istio-iptables validation, the injector's
// istio-validation init container), built from Istio's sources (test/istio) and installed with Istio's own istio-cni
// chart; cni-repair installed from its chart, as a Deployment or per node. Meshed pods start before Istio's agent has
// installed its plugin, so the real validator fails with 126 and crash-loops; then the agent comes and each of
// Istio's repair settings plays out for real. Ground truth: the API server's audit log (who sent which DELETE), the
// kubelet's pod statuses, and Istio's own repair metrics and logs.
//
// Istio's in-place repair cannot work on this machine: it enters the host's network namespace through
// /host/proc/1/ns/net before it looks for a pod's, and PID 1 here (the VM's init) refuses that even to root
// ("failed to Statfs \"/host/proc/1/ns/net\": permission denied", in Istio's log and metrics). So with repairPods
// every in-place repair fails for real, and the scenarios show cni-repair's fallback after it (docs/development.md).

import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { expect } from "chai";
import { flags } from "../../../src/config/flags.js";
import { ISTIO_REPAIR_GRACE_MS } from "../../../src/safety/mesh-repair-guard.js";
import { metricValue } from "../../harness/metrics-text.js";
import {
  agentRunDirRemover,
  createIstioSystem,
  ISTIO_DEFAULT_REPAIR,
  IstioAgent,
  type IstioRepairValues,
} from "../../harness/real-node/istio-agent.js";
import { type IstioImages, istioImages } from "../../harness/real-node/istio-images.js";
import {
  describeReport,
  livePods,
  meshDeletes,
  passedFirstRun,
  type RaceReport,
  raceReport,
  waitCrashLooping,
} from "../../harness/real-node/istio-race.js";
import { istioPodTemplate } from "../../harness/real-node/istio-workloads.js";
import { installChart, readyControllerPods, removeInstalled } from "../../harness/real-node/per-node-install.js";
import { RealNodeCluster } from "../../harness/real-node/real-node-cluster.js";
import { waitFor } from "../../harness/wait.js";

const REPLICAS = 3;
/** The chart sets no --cni-agent-min-ready: the flag's default applies. */
const MIN_READY_MS = flags["cni-agent-min-ready"].default;
/** 1 s of slack: the kubelet's Ready time has whole seconds. */
const SLACK_MS = 1_000;

type Scenario = {
  readonly agentNamespace: "istio-system" | "kube-system";
  readonly repair: IstioRepairValues;
  readonly mode: "cluster" | "per-node";
  /** Chart values beyond the test's scope. */
  readonly values?: Readonly<Record<string, string>>;
  /** Istio's agent restarted (its plugin removed and re-installed) right after it first turned Ready. */
  readonly restartAgent?: boolean;
};

type RaceResult = {
  readonly namespace: string;
  readonly agentNamespace: string;
  readonly broken: V1Pod[];
  readonly final: V1Pod[];
  readonly report: RaceReport;
  /** When Istio's agent (the last one, after a restart) turned Ready, by the kubelet. */
  readonly agentReadyAtMs: number;
  /** The restart's window: from the old agent pod's deletion to the new one Ready. */
  readonly restart?: { readonly fromMs: number; readonly readyAtMs: number; readonly pluginGone: boolean };
  readonly istioMetrics: string;
  readonly istioLogs: string;
  /** The most pods cni-repair held for Istio's in-place repair at once (mesh_repair_pending). */
  readonly heldForIstio: number;
};

const DISABLED: IstioRepairValues = { ...ISTIO_DEFAULT_REPAIR, enabled: false };
const DELETE_PODS: IstioRepairValues = { ...ISTIO_DEFAULT_REPAIR, repairPods: false, deletePods: true };

describe("e2e on a real node beside the real Istio: its CNI agent, plugin, validator and repair controller", function () {
  // The first run may build Istio's pieces (make istio does it ahead), the kubelet and the images.
  this.timeout(30 * 60_000);
  let cluster: RealNodeCluster | undefined;
  let images: IstioImages | undefined;
  let agent: IstioAgent | undefined;
  let installed = false;
  let removeAgentRunDir = () => {};

  before(async () => {
    removeAgentRunDir = agentRunDirRemover();
    images = istioImages();
    cluster = await RealNodeCluster.start({ meshPlugin: false });
    await cluster.node.containerd.importImage(images.agent);
    await cluster.node.containerd.importImage(images.proxy);
    await createIstioSystem(cluster);
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed") {
      console.log(agent?.logs().split("\n").slice(-60).join("\n"));
      console.log(cluster?.logTails());
    }
    await agent?.uninstall();
    agent = undefined;
    if (installed && cluster) await removeInstalled(cluster);
    installed = false;
  });
  after(async function () {
    this.timeout(120_000);
    await cluster?.stop();
    removeAgentRunDir();
  });

  /** cni-repair's metrics, from every one of its Ready pods (in cluster mode only the leader acts). */
  async function controllerMetrics(c: RealNodeCluster): Promise<string[]> {
    const pods = await readyControllerPods(c, 1);
    return await Promise.all(pods.map(async (pod) => (await fetch(`http://${pod.status?.podIP}:8080/metrics`)).text()));
  }
  const heldBy = (bodies: readonly string[], reason: string) =>
    Math.max(0, ...bodies.map((body) => metricValue(body, "cni_repair_pods_held", { reason })));

  async function race(s: Scenario): Promise<RaceResult> {
    if (!cluster || !images) throw new Error("no cluster");
    const c = cluster;
    const { node, apps } = c;
    const namespace = await c.createNamespace("mesh");
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: "web" },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: "web" } },
          template: istioPodTemplate(node, images, "web"),
        },
      },
    });
    const total = REPLICAS;
    // No Istio agent on the node yet: no plugin in its CNI configuration, so the validators fail for real.
    const broken = await waitCrashLooping(c, namespace, total);

    // cni-repair from its chart, watching only this test's namespace: it holds them, no agent being Ready.
    await installChart(c, s.mode, { "scope.namespaces": `{${namespace}}`, ...s.values });
    installed = true;
    await waitFor(
      "cni-repair to hold the broken pods for the node's CNI agent",
      async () => heldBy(await controllerMetrics(c), "cni_agent_not_ready") === total,
      { timeoutMs: 60_000, intervalMs: 500 },
    );

    agent = await IstioAgent.install(c, images, s.agentNamespace, s.repair);
    let { readyAtMs } = await agent.waitReady();
    let restart: RaceResult["restart"];
    if (s.restartAgent) {
      const fromMs = Date.now();
      await agent.restart();
      const pluginGone = !agent.pluginInstalled();
      readyAtMs = (await agent.waitReady()).readyAtMs;
      restart = { fromMs, readyAtMs, pluginGone };
    }
    let heldForIstio = 0;
    const { pods: final } = await waitFor(
      `${total} healthy pods in ${namespace}`,
      async () => {
        c.assertRunning();
        heldForIstio = Math.max(heldForIstio, heldBy(await controllerMetrics(c), "mesh_repair_pending"));
        const pods = await livePods(c, namespace);
        return pods.length === total && pods.every((pod) => pod.status?.phase === "Running" && isReady(pod))
          ? { pods }
          : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 500 },
    );
    const allRunningAtMs = Date.now();
    const deletes = meshDeletes(c.plane.auditLogPath, namespace, s.agentNamespace);
    const report = raceReport(broken, final, deletes, readyAtMs, allRunningAtMs);
    return {
      namespace,
      agentNamespace: s.agentNamespace,
      broken,
      final,
      report,
      agentReadyAtMs: readyAtMs,
      ...(restart && { restart }),
      istioMetrics: await agent.metrics(),
      istioLogs: agent.logs(),
      heldForIstio,
    };
  }

  const istioRepaired = (metrics: string, result: "success" | "fail") =>
    metricValue(metrics, "istio_cni_repair_pods_repaired_total", { type: "repair", result });

  /**
   * Istio repairs in place (its default) and fails on every pod here: cni-repair holds them (mesh_repair_pending)
   * until a validator failure after the agent had been Ready for min-ready + Istio's grace, then deletes each once,
   * as Istio's fallback (its Event says so); the replacements pass the real validator.
   */
  async function expectFallbackAfterIstio(result: RaceResult): Promise<void> {
    const { report, broken, final } = result;
    // Istio's view: it tried each pod in place, and failed.
    expect(istioRepaired(result.istioMetrics, "fail"), "Istio's failed in-place repairs").to.be.at.least(REPLICAS);
    expect(istioRepaired(result.istioMetrics, "success"), "Istio's in-place repairs").to.equal(0);
    expect(result.istioLogs).to.include('failed to Statfs "/host/proc/1/ns/net": permission denied');
    expect(result.heldForIstio, "pods held mesh_repair_pending at once").to.be.at.least(1);
    // The audit log: each broken pod deleted once by cni-repair, none by Istio, none twice, none before Istio had
    // had its chance (the agent Ready for min-ready and Istio's grace).
    expect([...report.deletedByCniRepair].sort()).to.deep.equal(broken.map((pod) => pod.metadata?.name).sort());
    expect(report.deletedByIstio).to.deep.equal([]);
    expect(report.deletedTwice).to.deep.equal([]);
    const deletes = meshDeletes(cluster?.plane.auditLogPath ?? "", result.namespace, result.agentNamespace);
    for (const d of deletes.filter((x) => x.by === "cni-repair")) {
      expect(d.atMs, `${d.name}: DELETE before Istio had its chance`).to.be.at.least(
        result.agentReadyAtMs + MIN_READY_MS + ISTIO_REPAIR_GRACE_MS - SLACK_MS,
      );
    }
    const api = cluster?.plane.kubeConfig().makeApiClient(CoreV1Api);
    const events = (await api?.listNamespacedEvent({ namespace: result.namespace }))?.items ?? [];
    const fallbacks = events.filter(
      (e) => e.reason === "BrokenPodDeleted" && (e.message ?? "").includes("Istio's fallback"),
    );
    expect(fallbacks.length, "BrokenPodDeleted Events naming Istio's fallback").to.equal(REPLICAS);
    for (const pod of final) expect(passedFirstRun(pod), pod.metadata?.name).to.equal(true);
  }

  it("repairPods (Istio's default) in istio-system, cni-repair as a Deployment: held while Istio repairs in place, deleted once each as its fallback when that failed", async () => {
    const result = await race({ agentNamespace: "istio-system", repair: ISTIO_DEFAULT_REPAIR, mode: "cluster" });
    await expectFallbackAfterIstio(result);
    console.log(describeReport("repairPods, istio-system, Deployment", result.report));
  });

  it("repairPods in kube-system (GKE's layout), cni-repair per node as the chart installs it (nothing pinned): the same, Istio's settings found and read there", async () => {
    const result = await race({ agentNamespace: "kube-system", repair: ISTIO_DEFAULT_REPAIR, mode: "per-node" });
    await expectFallbackAfterIstio(result);
    console.log(describeReport("repairPods, kube-system, per node", result.report));
  });

  it("repair disabled (kube-system), cni-repair per node: it deletes each broken pod once, after the agent's min-ready; the replacements pass the real validator", async () => {
    const result = await race({ agentNamespace: "kube-system", repair: DISABLED, mode: "per-node" });
    const { report, broken, final } = result;
    expect([...report.deletedByCniRepair].sort()).to.deep.equal(broken.map((pod) => pod.metadata?.name).sort());
    expect(report.deletedByIstio).to.deep.equal([]);
    expect(report.deletedTwice).to.deep.equal([]);
    expect(report.fixedByIstio).to.deep.equal([]);
    for (const pod of final) expect(passedFirstRun(pod), pod.metadata?.name).to.equal(true);
    expect(istioRepaired(result.istioMetrics, "success")).to.equal(0);
    console.log(describeReport("repair disabled, kube-system, per node", report));
  });

  it("deletePods (istio-system), cni-repair as a Deployment: Istio deletes, cni-repair stands aside, no pod is deleted twice", async () => {
    const result = await race({ agentNamespace: "istio-system", repair: DELETE_PODS, mode: "cluster" });
    const { report, final } = result;
    expect(report.deletedByCniRepair, "pods cni-repair deleted").to.deep.equal([]);
    expect(report.deletedByIstio.length, "pods Istio deleted").to.be.at.least(REPLICAS);
    expect(report.deletedTwice).to.deep.equal([]);
    expect(
      metricValue(result.istioMetrics, "istio_cni_repair_pods_repaired_total", { type: "delete", result: "success" }),
    ).to.be.at.least(1);
    for (const pod of final) expect(isReady(pod), pod.metadata?.name).to.equal(true);
    console.log(describeReport("deletePods, istio-system, Deployment", report));
  });

  it("Istio's agent restarted mid-way (repair disabled, istio-system), cni-repair per node: nothing deleted while its plugin is missing; each broken pod once after", async () => {
    const result = await race({
      agentNamespace: "istio-system",
      repair: DISABLED,
      mode: "per-node",
      restartAgent: true,
    });
    const { report, broken, final, restart } = result;
    if (!restart) throw new Error("no restart recorded");
    const deletes = meshDeletes(cluster?.plane.auditLogPath ?? "", result.namespace, "istio-system").filter(
      (d) => d.by === "cni-repair",
    );
    // None until the new agent had been Ready for min-ready: not while the old one was going, its plugin being
    // removed, nor before the new one had installed it again (1 s slack: the kubelet's Ready time has whole seconds).
    for (const d of deletes) {
      expect(d.atMs, `${d.name}: DELETE before the new agent was Ready for min-ready`).to.be.at.least(
        restart.readyAtMs + MIN_READY_MS - 1_000,
      );
    }
    expect([...report.deletedByCniRepair].sort()).to.deep.equal(broken.map((pod) => pod.metadata?.name).sort());
    expect(report.deletedTwice).to.deep.equal([]);
    for (const pod of final) expect(passedFirstRun(pod), pod.metadata?.name).to.equal(true);
    console.log(
      `${describeReport("agent restarted, istio-system, per node", report)}; plugin gone right after the old agent: ${restart.pluginGone}`,
    );
  });
});

function isReady(pod: V1Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}
