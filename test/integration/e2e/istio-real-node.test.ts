// End to end on a real node beside the real Istio: Istio's CNI node agent (install-cni, running Istio's repair
// controller), its CNI plugin (istio-cni) and its validator (pilot-agent's istio-iptables validation, the injector's
// istio-validation init container), built from Istio's sources (test/istio) and installed with Istio's own istio-cni
// chart; cni-repair installed from its chart, as a Deployment or per node. Meshed pods start before Istio's agent has
// installed its plugin, so the real validator fails with 126 and crash-loops; then the agent comes and each of
// Istio's repair settings plays out for real. Ground truth: the API server's audit log (who sent which DELETE), the
// kubelet's pod statuses, and Istio's own repair metrics and logs.
//
// Istio's in-place repair enters the host's network namespace through its hostPath /proc (/host/proc/1/ns/net) and
// searches /proc for the pod's; this machine's PID 1 refuses that even to root, so the node's containerd and kubelet
// run in a PID and mount namespace of their own, whose PID 1 (containerd) it may enter (node-namespaces.ts). With
// repairPods, one pod's in-place repair is made to fail for real: its interface is renumbered (its IP replaced by
// another address) before Istio's agent comes, so Istio's search finds no namespace with the pod's IP
// (pod-address.ts), while its validator fails with 126 as before.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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
  validatorOf,
  waitCrashLooping,
} from "../../harness/real-node/istio-race.js";
import { istioPodTemplate } from "../../harness/real-node/istio-workloads.js";
import { installChart, readyControllerPods, removeInstalled } from "../../harness/real-node/per-node-install.js";
import { renumberPod } from "../../harness/real-node/pod-address.js";
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
  /** One broken pod's interface renumbered before Istio's agent comes: its in-place repair fails. */
  readonly breakOneRepair?: boolean;
};

type RaceResult = {
  readonly namespace: string;
  readonly agentNamespace: string;
  readonly broken: V1Pod[];
  /** The broken pod whose in-place repair was made to fail, if any. */
  readonly unrepairable?: string;
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
    // Istio's in-place repair needs a PID 1 it may enter in its hostPath /proc: the node's own (see above).
    cluster = await RealNodeCluster.start({ meshPlugin: false, ownPidNamespace: true });
    await cluster.node.containerd.importImage(images.agent);
    await cluster.node.containerd.importImage(images.proxy);
    await createIstioSystem(cluster);
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed") {
      console.log(agent?.logs().split("\n").slice(-60).join("\n"));
      if (cluster) console.log(controllerLogs(cluster.node.layout.podLogsDir));
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
    const unrepairable = s.breakOneRepair ? broken[0]?.metadata : undefined;
    if (unrepairable) {
      const removed = renumberPod(node.layout, unrepairable.uid ?? "");
      expect(removed, `${unrepairable.name}'s addresses replaced`).to.have.length.at.least(1);
    }

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
      ...(unrepairable?.name && { unrepairable: unrepairable.name }),
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
   * Istio repairs in place (its default): it fixes every pod it finds, and cni-repair sends none of them a DELETE,
   * holding them mesh_repair_pending until their validator passes on its next run. The one pod whose repair failed
   * for real (Istio found no network namespace for it) is deleted once by cni-repair, as Istio's fallback (its
   * Event says so), only after a validator run that began once Istio had had its chance; its replacement passes.
   */
  /** Returns how cni-repair held each pod Istio fixed, for the test's output. */
  async function expectFixedInPlaceAndOneFallback(result: RaceResult): Promise<string> {
    const { report, broken, final, unrepairable } = result;
    if (!unrepairable) throw new Error("no pod was made unrepairable");
    const fixable = broken.map((pod) => pod.metadata?.name ?? "").filter((name) => name !== unrepairable);
    // Istio's view: it fixed the others in place, and failed on that one.
    // Its metric counts every namespace (a pod an earlier failed scenario left broken too); its log names each pod.
    expect(istioRepaired(result.istioMetrics, "success"), "Istio's in-place repairs").to.be.at.least(fixable.length);
    expect(istioRepaired(result.istioMetrics, "fail"), "Istio's failed in-place repairs").to.be.at.least(1);
    for (const name of fixable) {
      expect(repairedLines(result.istioLogs, name), `Istio's log: ${name} repaired`).to.have.length(1);
    }
    expect(repairedLines(result.istioLogs, unrepairable), `Istio's log: ${unrepairable} repaired`).to.deep.equal([]);
    expect(result.istioLogs).to.include("failed to find network namespace");
    // Held for Istio meanwhile, never deleted: the same pods run now, their validator passed after a failure.
    expect(result.heldForIstio, "pods held mesh_repair_pending at once").to.be.at.least(1);
    expect([...report.fixedByIstio].sort()).to.deep.equal([...fixable].sort());
    for (const name of fixable) {
      const status = validatorOf(final.find((pod) => pod.metadata?.name === name) ?? {});
      expect(status?.state?.terminated?.exitCode, `${name}: the validator passed`).to.equal(0);
      // Restarted: it had failed before (the kubelet drops lastState once the init container has completed).
      expect(status?.restartCount, `${name}: after failing`).to.be.at.least(1);
    }
    // The audit log: cni-repair's only DELETE is the unrepairable pod's, one request, after Istio had had its chance
    // (the agent Ready for min-ready and Istio's grace); Istio deleted nothing; nothing twice.
    const ours = meshDeletes(cluster?.plane.auditLogPath ?? "", result.namespace, result.agentNamespace).filter(
      (d) => d.by === "cni-repair",
    );
    expect(
      ours.map((d) => d.name),
      "every DELETE cni-repair sent",
    ).to.deep.equal([unrepairable]);
    expect(report.deletedByCniRepair).to.deep.equal([unrepairable]);
    expect(report.deletedByIstio).to.deep.equal([]);
    expect(report.deletedTwice).to.deep.equal([]);
    for (const d of ours) {
      expect(d.atMs, `${d.name}: DELETE before Istio had its chance`).to.be.at.least(
        result.agentReadyAtMs + MIN_READY_MS + ISTIO_REPAIR_GRACE_MS - SLACK_MS,
      );
    }
    const api = cluster?.plane.kubeConfig().makeApiClient(CoreV1Api);
    const events = (await api?.listNamespacedEvent({ namespace: result.namespace }))?.items ?? [];
    const fallbacks = events.filter(
      (e) => e.reason === "BrokenPodDeleted" && (e.message ?? "").includes("Istio's fallback"),
    );
    expect(
      fallbacks.map((e) => e.involvedObject.name),
      "BrokenPodDeleted Events naming Istio's fallback",
    ).to.deep.equal([unrepairable]);
    const replacement = final.filter((pod) => !fixable.includes(pod.metadata?.name ?? ""));
    expect(replacement, "the unrepairable pod's replacement").to.have.length(1);
    for (const pod of replacement) expect(passedFirstRun(pod), pod.metadata?.name).to.equal(true);
    // cni-repair's own account (its BrokenPodHeld Events): it held every pod Istio fixed, for the agent's min-ready
    // (cni_agent_not_ready) or for Istio's repair (mesh_repair_pending), whichever was pending when the pod
    // recovered, and held the unrepairable one for Istio's repair before it fell back.
    const holds = (name: string) => [
      ...new Set(
        events
          .filter((e) => e.reason === "BrokenPodHeld" && e.involvedObject.name === name)
          .map((e) => /^held \(([a-z_]+)\)/.exec(e.message ?? "")?.[1] ?? "?"),
      ),
    ];
    for (const name of fixable) expect(holds(name), `${name}: held by cni-repair`).to.not.deep.equal([]);
    expect(holds(unrepairable), `${unrepairable}: held by cni-repair`).to.include("mesh_repair_pending");
    return fixable.map((name) => `${name} held ${holds(name).sort().join(", ")}`).join("; ");
  }

  it("repairPods (Istio's default) in istio-system, cni-repair as a Deployment: Istio fixes the pods in place and cni-repair deletes none of them; it deletes once, as Istio's fallback, only the pod whose repair failed", async () => {
    const result = await race({
      agentNamespace: "istio-system",
      repair: ISTIO_DEFAULT_REPAIR,
      mode: "cluster",
      breakOneRepair: true,
    });
    const holds = await expectFixedInPlaceAndOneFallback(result);
    console.log(
      `${describeReport("repairPods, istio-system, Deployment", result.report, result.heldForIstio)}; ${holds}`,
    );
  });

  it("repairPods in kube-system (GKE's layout), cni-repair per node as the chart installs it (nothing pinned): the same, Istio's settings found and read there", async () => {
    const result = await race({
      agentNamespace: "kube-system",
      repair: ISTIO_DEFAULT_REPAIR,
      mode: "per-node",
      breakOneRepair: true,
    });
    const holds = await expectFixedInPlaceAndOneFallback(result);
    console.log(`${describeReport("repairPods, kube-system, per node", result.report, result.heldForIstio)}; ${holds}`);
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

/** The end of each cni-repair container's log the kubelet kept, for a failing test's output. */
function controllerLogs(podLogsDir: string): string {
  if (!existsSync(podLogsDir)) return "";
  return readdirSync(podLogsDir)
    .filter((pod) => pod.startsWith("cni-repair_"))
    .flatMap((pod) => {
      const dir = join(podLogsDir, pod, "cni-repair");
      if (!existsSync(dir)) return [];
      return readdirSync(dir).map((file) => {
        const lines = readFileSync(join(dir, file), "utf8").trimEnd().split("\n").slice(-40);
        return `--- cni-repair ${pod}/${file}\n${lines.join("\n")}`;
      });
    })
    .join("\n");
}

/** Istio's "pod repaired" log lines for the pod (its repair controller logs the pod as namespace/name). */
function repairedLines(logs: string, pod: string): string[] {
  return logs
    .split("\n")
    .filter((line) => line.includes("pod repaired") && line.split(/\s+/).some((word) => word.endsWith(`/${pod}`)));
}

function isReady(pod: V1Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}
