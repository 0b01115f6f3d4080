// Istio's repair settings where Istio's CNI agent really runs, against a real API server of its own (Istio's objects
// are read by name in every namespace: no other test's may be there). The agent (its DaemonSet, its ConfigMap, its
// pod Ready for an hour) goes in kube-system (GKE's layout), istio-system or a namespace of the user's; the
// controller is not told where. The pod is the crash loop the real kubelet writes (test/fixtures/kubelet: lastState
// exit 126, restartCount 1), which is exactly the status Istio's repair acts on: held, and deleted only once a later
// run failed too. With Istio's deletePods it deletes nothing Istio deletes; with the agent and no settings, or the
// settings unreadable (403), the pod is held as unknown. The audit log is the ground truth.
import { setTimeout as sleep } from "node:timers/promises";
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { expect } from "chai";
import { isAllowed, serviceAccountIdentity } from "../../harness/access-review.js";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { agentName, createCniAgent } from "../../harness/cni-agents.js";
import { ControlPlane } from "../../harness/control-plane.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { inClusterIdentity } from "../../harness/in-cluster.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { writePodStatus } from "../../harness/pod-fixtures.js";
import { waitFor } from "../../harness/wait.js";
import { backOffStatus, nextRunFailed } from "../../support/validator-runs.js";

const NODE = "mesh-node";
const HOUR_AGO = () => new Date(Date.now() - 3_600_000);
/** What the chart grants (templates/rbac-istio-repair.yaml, a ClusterRole): the two objects by name, anywhere. */
const ISTIO_READS: V1PolicyRule[] = [
  { apiGroups: [""], resources: ["configmaps"], resourceNames: ["istio-cni-config"], verbs: ["get", "list", "watch"] },
  {
    apiGroups: ["apps"],
    resources: ["daemonsets"],
    resourceNames: ["istio-cni-node"],
    verbs: ["get", "list", "watch"],
  },
];
/** What every install grants for pods (the modes' ClusterRoles), for a controller running as a ServiceAccount. */
const POD_RULES: V1PolicyRule[] = [
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "delete"] },
  { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] },
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] },
];

describe("Istio's repair settings where its CNI agent runs (kube-system, istio-system, a custom namespace)", function () {
  this.timeout(180_000);
  let plane: ControlPlane;
  let api: CoreV1Api;
  let apps: AppsV1Api;
  /** Where the workload runs; the controller watches only there. */
  let namespace: string;
  let controller: ControllerProcess | undefined;
  /** The namespaces given Istio's objects in this test, emptied afterwards. */
  let used: string[] = [];

  before(async () => {
    plane = await ControlPlane.start();
    api = plane.kubeConfig().makeApiClient(CoreV1Api);
    apps = plane.kubeConfig().makeApiClient(AppsV1Api);
  });

  after(async () => {
    await plane?.stop();
  });

  beforeEach(async () => {
    namespace = await createTestNamespace(api);
  });

  afterEach(async function () {
    if (this.currentTest?.state === "failed" && controller) console.log(controller.output());
    if (controller) expect(await controller.stop(), "controller exit code").to.equal(0);
    controller = undefined;
    for (const where of used) await removeIstio(where);
    used = [];
  });

  /** Istio's CNI agent as its chart installs it: the DaemonSet (settings by envFrom), its ConfigMap, a Ready pod. */
  const installIstioCni = async (where: string, settings: Record<string, string> | undefined) => {
    used.push(where);
    await api.createNamespace({ body: { metadata: { name: where } } }).catch(() => undefined);
    await apps.createNamespacedDaemonSet({ namespace: where, body: istioCniDaemonSet(where) });
    if (settings) {
      await api.createNamespacedConfigMap({
        namespace: where,
        body: { metadata: { name: "istio-cni-config", namespace: where }, data: settings },
      });
    }
    await createCniAgent(api, {
      namespace: where,
      mesh: "istio",
      istioSettings: "own",
      nodeName: NODE,
      readySince: HOUR_AGO(),
    });
  };

  const removeIstio = async (where: string) => {
    const gone = async (request: Promise<unknown>) => await request.catch(() => undefined);
    await gone(api.deleteNamespacedConfigMap({ namespace: where, name: "istio-cni-config" }));
    await gone(apps.deleteNamespacedDaemonSet({ namespace: where, name: "istio-cni-node" }));
    await gone(api.deleteNamespacedPod({ namespace: where, name: agentName("istio", NODE), gracePeriodSeconds: 0 }));
  };

  /** A pod in the crash loop the kubelet writes after run 1 failed (lastState 126, restartCount 1), just now. */
  const crashLooping = async (name: string) => {
    await createPodInState(api, { namespace, name, nodeName: NODE });
    const status = backOffStatus(Math.floor(Date.now() / 1000) * 1000 - 1_000);
    await writePodStatus(api, { namespace, name }, { phase: "Pending", initContainerStatuses: [status] });
    return status;
  };

  const start = async (extra: readonly string[] = [], env?: Record<string, string>) => {
    controller = await ControllerProcess.start({
      args: [
        ...(env ? [] : [`--kubeconfig=${plane.kubeconfigPath}`]),
        `--field-selector=metadata.namespace=${namespace}`,
        "--leader-elect=false",
        "--cni-agent-min-ready=1s",
        ...extra,
      ],
      ...(env && { env }),
    });
    return controller;
  };

  const deleted = () =>
    controllerDeletes(plane.auditLogPath, namespace)
      .filter((e) => e.responseStatus?.code === 200)
      .map((e) => e.objectRef?.name ?? "");
  const metric = async (name: string, labels: Record<string, string>) => (await controller?.metric(name, labels)) ?? 0;
  const held = async (reason: string) => await metric("cni_repair_pods_held", { reason });

  /** No DELETE reaches the server for a while (the controller judged the pod many times over). */
  const noDeleteFor = async (ms: number, why: string) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      expect(deleted(), why).to.deep.equal([]);
      await sleep(250);
    }
  };

  for (const where of ["kube-system", "istio-system", "mesh-cni"]) {
    it(`${where}: in place, the crash loop Istio repairs is held on a node whose agent has been Ready an hour; deleted only once a later run failed`, async () => {
      await installIstioCni(where, { REPAIR_ENABLED: "true", REPAIR_REPAIR_PODS: "true" });
      const run1 = await crashLooping("looping");
      await start();
      await waitFor("held for Istio", async () => (await held("mesh_repair_pending")) === 1);
      expect(await metric("cni_repair_istio_repair_mode", { mode: "in_place" })).to.equal(1);
      expect(controller?.output()).to.include(`ConfigMap ${where}/istio-cni-config`);
      await noDeleteFor(3_000, "no DELETE while Istio can still repair the pod");

      // Run 2 started after Istio's repair had its chance (the kubelet's 10 s back-off) and failed too.
      const run2 = nextRunFailed(run1, 10_000);
      const waitedFrom = Date.now();
      await writePodStatus(api, { namespace, name: "looping" }, { initContainerStatuses: [run2] });
      await waitFor("the fallback delete", () => deleted().includes("looping"));
      console.log(`      fallback delete ${Date.now() - waitedFrom} ms after run 2's failure was written`);
      expect(await metric("cni_repair_mesh_fallback_deletions_total", { basis: "failed_again" })).to.equal(1);
    });
  }

  for (const where of ["kube-system", "mesh-cni"]) {
    it(`${where}: Istio's deletePods: deletes nothing Istio deletes, not even after later runs failed`, async () => {
      await installIstioCni(where, { REPAIR_REPAIR_PODS: "false", REPAIR_DELETE_PODS: "true" });
      const run1 = await crashLooping("istio-deletes");
      await start();
      await waitFor("held while Istio deletes", async () => (await held("mesh_repair_active")) === 1);
      expect(await metric("cni_repair_istio_repair_mode", { mode: "delete" })).to.equal(1);
      const run3 = nextRunFailed(nextRunFailed(run1, 10_000), 20_000);
      await writePodStatus(api, { namespace, name: "istio-deletes" }, { initContainerStatuses: [run3] });
      await noDeleteFor(3_000, "Istio deletes these pods itself");
      expect(await held("mesh_repair_active")).to.equal(1);
    });
  }

  it("the agent's DaemonSet and pod in kube-system, no istio-cni-config and no REPAIR_* env: unknown, held as in place, warned", async () => {
    await installIstioCni("kube-system", undefined);
    // A ConfigMap left in istio-system where no agent runs says nothing about the agent in kube-system.
    used.push("istio-system");
    await api.createNamespace({ body: { metadata: { name: "istio-system" } } }).catch(() => undefined);
    await api.createNamespacedConfigMap({
      namespace: "istio-system",
      body: { metadata: { name: "istio-cni-config" }, data: { REPAIR_ENABLED: "false" } },
    });
    const run1 = await crashLooping("looping");
    await start();
    await waitFor("held as unknown", async () => (await held("mesh_repair_pending")) === 1);
    expect(await metric("cni_repair_istio_repair_mode", { mode: "unknown" })).to.equal(1);
    expect(await metric("cni_repair_istio_repair_mode", { mode: "off" })).to.equal(0);
    expect(controller?.output()).to.include("Istio's repair settings are unknown");
    expect(controller?.output()).to.include("Istio's CNI agent runs in namespace kube-system");
    await noDeleteFor(2_000, "held as if Istio repaired in place");
    await writePodStatus(api, { namespace, name: "looping" }, { initContainerStatuses: [nextRunFailed(run1, 10_000)] });
    await waitFor("the fallback delete once a later run failed", () => deleted().includes("looping"));
  });

  it("no Istio agent anywhere and no settings: off, the istio rule deletes on its own", async () => {
    await crashLooping("plain");
    await start(["--cni-agent-gate=off"]);
    await waitFor("the delete", () => deleted().includes("plain"));
    expect(await metric("cni_repair_istio_repair_mode", { mode: "off" })).to.equal(1);
  });

  it("403: settings in kube-system not readable: unknown, held; the chart's ClusterRole (by resourceNames) reads them, with no 403", async () => {
    await installIstioCni("kube-system", { REPAIR_REPAIR_PODS: "true" });
    await crashLooping("guarded");
    const identity = await inClusterIdentity(plane, namespace, "restricted", POD_RULES);
    await start([], identity.env);
    await waitFor("held as unknown", async () => (await held("mesh_repair_pending")) === 1);
    expect(await metric("cni_repair_istio_repair_mode", { mode: "unknown" })).to.equal(1);
    expect(controller?.output()).to.include("cannot read Istio's repair settings");
    expect(controller?.output(), "the rules to grant, in the warning").to.include("rules to add to a ClusterRole");
    expect(controller?.output()).to.include("Istio's repair settings are unknown");
    await noDeleteFor(2_000, "no DELETE while the settings cannot be read");
    expect(await controller?.stop()).to.equal(0);

    const rbac = plane.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const name = `${namespace}-istio-repair`;
    await rbac.createClusterRole({ body: { metadata: { name }, rules: ISTIO_READS } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [{ kind: "ServiceAccount", name: "restricted", namespace }],
      },
    });
    // The authorizer learns of new bindings from an informer: wait until it allows the cluster-wide list by name.
    const who = serviceAccountIdentity(namespace, "restricted");
    const listByName = { verb: "list", resource: "configmaps", name: "istio-cni-config", namespace: "" };
    await waitFor("the ClusterRoleBinding to take effect", async () => await isAllowed(plane, who, listByName));
    await start([], identity.env);
    await waitFor("the settings read in kube-system", async () => (await held("mesh_repair_pending")) === 1);
    expect(await metric("cni_repair_istio_repair_mode", { mode: "in_place" })).to.equal(1);
    expect(controller?.output()).to.not.include("cannot read Istio's repair settings");
    const { body } = (await controller?.get("/metrics")) ?? { body: "" };
    expect(
      body
        .split("\n")
        .filter((line) => /^cni_repair_api_requests_total\{.*code="403"/.test(line) && !line.endsWith(" 0")),
    ).to.deep.equal([]);
    expect(deleted()).to.deep.equal([]);
    identity.cleanup();
  });
});

/** Istio's istio-cni-node DaemonSet as its chart writes it: the repair settings come from the ConfigMap (envFrom). */
function istioCniDaemonSet(namespace: string) {
  const labels = { "k8s-app": "istio-cni-node" };
  return {
    metadata: { name: "istio-cni-node", namespace },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: "install-cni",
              image: "registry.invalid/install-cni:1",
              envFrom: [{ configMapRef: { name: "istio-cni-config", optional: true } }],
            },
          ],
        },
      },
    },
  };
}
