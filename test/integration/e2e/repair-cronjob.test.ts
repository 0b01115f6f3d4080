// The chart's repair CronJob (issue 32, item 6) on a control plane with kube-controller-manager's Job controller:
// installed from the chart in its release namespace next to the metrics Service, a Job made from the CronJob as an
// operator does (`kubectl create job --from=cronjob/…`), its pod created by the real Job controller (and admitted
// under the namespace's Pod Security "restricted"), then run as the kubelet would run it: the pod's args and env,
// the Service variables the kubelet gives it, and a token bound to that pod. The pass deletes the broken pod with
// preconditions as the chart's ServiceAccount (the audit log says so), exits 0, and the Job completes. A Job of an
// operator's own with service links on (the kubelet then adds CNI_REPAIR_METRICS_SERVICE_HOST, …) starts and
// repairs too: before issue 32 the environment check refused those variables (exit 2).
import { BatchV1Api, CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { releaseBinaries } from "../../harness/binaries.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { createCniAgent } from "../../harness/cni-agents.js";
import { ControlPlane } from "../../harness/control-plane.js";
import { runCommand } from "../../harness/controller-process.js";
import { renderChart } from "../../harness/helm.js";
import { startControllerManager } from "../../harness/kube-components.js";
import { kubectl } from "../../harness/kubectl.js";
import { kubeletServiceEnv } from "../../harness/kubelet-service-env.js";
import type { ManagedProcess } from "../../harness/managed-process.js";
import { INSTALL, installRendered, podCommand } from "../../harness/overlays.js";
import { completedContainer, writePodStatus } from "../../harness/pod-fixtures.js";
import { inClusterAs } from "../../harness/service-account-files.js";
import { waitFor } from "../../harness/wait.js";

const CRONJOB = "cni-repair-repair";
/** kube-controller-manager's work (a ServiceAccount, a Job's pod, its completion) on a busy machine. */
const SLOW = { timeoutMs: 60_000, intervalMs: 200 };

describe("chart: the repair CronJob's Job in the release namespace starts and repairs (real API server, Job controller)", function () {
  this.timeout(5 * 60_000);
  let plane: ControlPlane;
  let controllerManager: ManagedProcess;
  let api: CoreV1Api;
  let batch: BatchV1Api;

  before(async function () {
    this.timeout(10 * 60_000);
    plane = await ControlPlane.start({ serviceAccountAdmission: true });
    controllerManager = startControllerManager(plane, {
      kubeControllerManager: releaseBinaries(["kube-controller-manager"])["kube-controller-manager"],
    });
    api = plane.kubeConfig().makeApiClient(CoreV1Api);
    batch = plane.kubeConfig().makeApiClient(BatchV1Api);
    // The chart's defaults but two: an image name of the test's, and Istio's own repair set aside (what the pass
    // does beside it is docs/operations.md's coexistence, not this test's subject).
    const rendered = await renderChart("cluster", {
      "cronJob.enabled": "true",
      istioRepair: "ignore",
      "image.repository": "registry.invalid/cni-repair",
    });
    await installRendered(plane, rendered);
  });

  after(async function () {
    this.timeout(60_000);
    await controllerManager?.stop();
    await plane?.stop();
  });

  /** A namespace with its "default" ServiceAccount (kube-controller-manager makes it), a broken pod on a node whose
   * Istio CNI agent has been Ready for an hour. */
  const brokenPodOn = async (prefix: string, nodeName: string) => {
    const namespace = `${prefix}-${Date.now().toString(36)}`;
    await api.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor(
      `the default ServiceAccount in ${namespace}`,
      async () => {
        const accounts = await api.listNamespacedServiceAccount({ namespace });
        return accounts.items.some((account) => account.metadata?.name === "default");
      },
      SLOW,
    );
    await createCniAgent(api, {
      namespace,
      mesh: "istio",
      nodeName,
      readySince: new Date(Math.floor(Date.now() / 1000 - 3_600) * 1000),
    });
    const pod = await createPodInState(api, { namespace, name: "broken", nodeName });
    return { namespace, pod };
  };

  /** The Job controller's pod of the Job. */
  const jobPod = async (job: string): Promise<V1Pod> =>
    await waitFor(
      `the Job controller to create ${job}'s pod`,
      async () => {
        const pods = await api.listNamespacedPod({ namespace: INSTALL.namespace, labelSelector: `job-name=${job}` });
        return pods.items[0];
      },
      SLOW,
    );

  /** Runs the pod's one container as the kubelet would, as the pod's ServiceAccount with a token bound to it. */
  const runAsKubelet = async (pod: V1Pod) => {
    const container = pod.spec?.containers[0];
    if (!container) throw new Error("the Job's pod has no container");
    const name = pod.metadata?.name ?? "";
    const { args, env, nodeFlags } = podCommand(container, {
      namespace: INSTALL.namespace,
      nodeName: "",
      podName: name,
    });
    expect(nodeFlags, "the image's own entry point").to.deep.equal([]);
    const services = await kubeletServiceEnv(api, pod);
    const identity = await inClusterAs(plane, INSTALL.namespace, pod.spec?.serviceAccountName ?? "", {
      name,
      uid: pod.metadata?.uid ?? "",
    });
    try {
      return { services, result: await runCommand(args, { ...services, ...env, ...identity.env }) };
    } finally {
      identity.cleanup();
    }
  };

  /** Marks the pod Succeeded as the kubelet would after exit 0; the Job controller then completes the Job. */
  const finish = async (pod: V1Pod, job: string) => {
    await writePodStatus(
      api,
      { namespace: INSTALL.namespace, name: pod.metadata?.name ?? "" },
      {
        phase: "Succeeded",
        containerStatuses: [completedContainer("cni-repair", pod.spec?.containers[0]?.image ?? "")],
      },
    );
    await waitFor(
      `Job ${job} to complete`,
      async () => {
        const read = await batch.readNamespacedJob({ namespace: INSTALL.namespace, name: job });
        return read.status?.conditions?.some((c) => c.type === "Complete" && c.status === "True");
      },
      SLOW,
    );
  };

  const expectRepaired = (namespace: string, pod: V1Pod, stdout: string) => {
    expect(stdout).to.match(/broken\s.*delete success/);
    const deletes = controllerDeletes(plane.auditLogPath, namespace);
    expect(
      deletes.map((event) => [event.objectRef?.name, event.responseStatus?.code, event.user?.username]),
    ).to.deep.equal([["broken", 200, `system:serviceaccount:${INSTALL.namespace}:${INSTALL.serviceAccount}`]]);
    expect(deletes[0]?.requestObject?.preconditions).to.deep.equal({
      uid: pod.metadata?.uid,
      resourceVersion: pod.metadata?.resourceVersion,
    });
  };

  afterEach(async () => {
    // The deleted pods stay terminating without a kubelet: gone at once, so the next pass does not see them.
    for (const pod of (await api.listPodForAllNamespaces({ labelSelector: "" })).items) {
      if (pod.metadata?.deletionTimestamp && pod.metadata.namespace !== INSTALL.namespace) {
        await api.deleteNamespacedPod({
          namespace: pod.metadata.namespace ?? "",
          name: pod.metadata.name ?? "",
          gracePeriodSeconds: 0,
        });
      }
    }
  });

  it("kubectl create job --from=cronjob: the Job controller's pod (no service links) runs scan --repair, deletes the broken pod, and the Job completes", async () => {
    const { namespace, pod: broken } = await brokenPodOn("cron", "node-cron");
    await kubectl(["create", "job", "repair-now", `--from=cronjob/${CRONJOB}`, "-n", INSTALL.namespace], { plane });
    const pod = await jobPod("repair-now");
    expect(pod.spec?.enableServiceLinks).to.equal(false);
    expect(pod.spec?.restartPolicy).to.equal("Never");
    expect(pod.spec?.serviceAccountName).to.equal(INSTALL.serviceAccount);
    expect(pod.spec?.containers[0]?.args?.slice(0, 2)).to.deep.equal(["scan", "--preset=istio"]);
    expect(pod.spec?.containers[0]?.args).to.include("--repair");

    const { services, result } = await runAsKubelet(pod);
    expect(Object.keys(services).filter((name) => name.startsWith("CNI_REPAIR_"))).to.deep.equal([]);
    expect(result.code, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expectRepaired(namespace, broken, result.stdout);
    await finish(pod, "repair-now");
  });

  it("an operator's own Job from the same template with service links on gets the metrics Service's variables, and still starts and repairs", async () => {
    const { namespace, pod: broken } = await brokenPodOn("links", "node-links");
    const cronJob = await batch.readNamespacedCronJob({ namespace: INSTALL.namespace, name: CRONJOB });
    const template = cronJob.spec?.jobTemplate.spec;
    if (!template?.template.spec) throw new Error("the CronJob has no jobTemplate");
    template.template.spec.enableServiceLinks = true;
    await batch.createNamespacedJob({
      namespace: INSTALL.namespace,
      body: { metadata: { name: "repair-links" }, spec: template },
    });
    const pod = await jobPod("repair-links");

    const { services, result } = await runAsKubelet(pod);
    const metricsService = await api.readNamespacedService({
      namespace: INSTALL.namespace,
      name: "cni-repair-metrics",
    });
    expect(services).to.include({
      CNI_REPAIR_METRICS_SERVICE_HOST: metricsService.spec?.clusterIP,
      CNI_REPAIR_METRICS_SERVICE_PORT_METRICS: "8080",
      CNI_REPAIR_METRICS_PORT: `tcp://${metricsService.spec?.clusterIP}:8080`,
      CNI_REPAIR_METRICS_PORT_8080_TCP_PROTO: "tcp",
    });
    expect(result.code, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expectRepaired(namespace, broken, result.stdout);
    await finish(pod, "repair-links");
  });
});
