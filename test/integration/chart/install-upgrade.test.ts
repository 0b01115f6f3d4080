// The packaged chart (charts/package.sh, what the release pushes) installed with helm on a real API server, then
// upgraded through every mode and back. After each step: the ServiceAccount has exactly that mode's permissions
// (SelfSubjectRulesReview and SubjectAccessReviews, as for the kustomize overlays), nothing of the previous mode is
// left, the controller runs in-cluster with a TokenRequest token and the args and env of the workload as the API
// server stores it, and the Namespace and the monitoring objects are the same objects as after the install.
import { AppsV1Api, CoreV1Api, type KubernetesObject, loadAllYaml, type V1Container } from "@kubernetes/client-node";
import { expect } from "chai";
import { helm, IMAGE_VALUES, packageChart, setValues } from "../../harness/helm.js";
import { kubectl } from "../../harness/kubectl.js";
import { expectExactGrants, expectModeVerdicts } from "../../harness/mode-permissions.js";
import { inClusterRuns, runModeScenario } from "../../harness/mode-scenarios.js";
import { installMonitoringCrds, removeMonitoringCrds } from "../../harness/monitoring-crds.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { applyNamespace, INSTALL, type Overlay, uninstall } from "../../harness/overlays.js";
import { serviceAccountToken } from "../../harness/service-account-files.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";

const RELEASE = "cni-repair";
const STEPS: readonly Overlay[] = ["cluster", "per-node", "label-only", "dry-run", "cluster"];
const MONITORING = ["servicemonitor/cni-repair", "prometheusrule/cni-repair", "configmap/cni-repair-dashboard"];
/** Every kind the chart can create, to find what a release left behind. */
const KINDS =
  "deployment,daemonset,poddisruptionbudget,service,networkpolicy,serviceaccount,role,rolebinding,clusterrole," +
  "clusterrolebinding,priorityclass,configmap,servicemonitor,prometheusrule,validatingadmissionpolicy," +
  "validatingadmissionpolicybinding";

describe("chart: helm install, then helm upgrade through every mode and back", function () {
  this.timeout(20 * 60_000);
  let chart: string;
  const runs = inClusterRuns();

  before(async () => {
    const plane = controlPlane();
    await uninstall(plane);
    await installMonitoringCrds(plane);
    // The documented first step: the namespace, apart from any release or overlay.
    await applyNamespace(plane);
    // Exactly the release workflow's step: make chart-package (strict lint, then helm package).
    chart = packageChart();
  });

  after(async () => {
    const plane = controlPlane();
    await helm(["uninstall", RELEASE, "--namespace", INSTALL.namespace, "--ignore-not-found"], { plane });
    await removeMonitoringCrds(plane);
  });

  /** "kind/name" of every object the release's labels select, as the API server has them, with their UIDs. */
  const liveObjects = async () => {
    const list = JSON.parse(
      await kubectl(["get", KINDS, "--all-namespaces", "-l", `app.kubernetes.io/instance=${RELEASE}`, "-o", "json"], {
        plane: controlPlane(),
      }),
    ) as { items: KubernetesObject[] };
    return new Map(
      list.items.map((object) => [`${object.kind}/${object.metadata?.name}`.toLowerCase(), object.metadata?.uid]),
    );
  };

  /** The release's objects as helm recorded them. */
  const releaseObjects = async () => {
    const manifest = await helm(["get", "manifest", RELEASE, "--namespace", INSTALL.namespace], {
      plane: controlPlane(),
    });
    return (loadAllYaml(manifest) as KubernetesObject[])
      .map((object) => `${object.kind}/${object.metadata?.name}`.toLowerCase())
      .sort();
  };

  /** The controller container of the Deployment or DaemonSet as the API server stores it. */
  const liveContainer = async (mode: Overlay): Promise<V1Container> => {
    const apps = controlPlane().kubeConfig().makeApiClient(AppsV1Api);
    const workload =
      mode === "per-node"
        ? await apps.readNamespacedDaemonSet({ namespace: INSTALL.namespace, name: RELEASE })
        : await apps.readNamespacedDeployment({ namespace: INSTALL.namespace, name: RELEASE });
    const [container] = workload.spec?.template.spec?.containers ?? [];
    if (!container) throw new Error(`${mode}: the workload has no container`);
    return container;
  };

  const namespaceUid = async () =>
    (await controlPlane().kubeConfig().makeApiClient(CoreV1Api).readNamespace({ name: INSTALL.namespace })).metadata
      ?.uid;

  it("every step grants exactly its mode, leaves nothing of the last one, and its controller does its job", async () => {
    const plane = controlPlane();
    const namespaceBefore = await namespaceUid();
    let monitoringBefore: (string | undefined)[] | undefined;

    for (const [step, mode] of STEPS.entries()) {
      // Upgrades as the docs write them: the release's values (the image among them) over the chart's defaults.
      const action = step === 0 ? ["install", ...setValues(IMAGE_VALUES)] : ["upgrade", "--reset-then-reuse-values"];
      const monitoring = step === 0 ? ["serviceMonitor", "prometheusRule", "dashboard"] : [];
      await helm(
        [
          ...action,
          RELEASE,
          chart,
          "--namespace",
          INSTALL.namespace,
          "--set",
          `mode=${mode}`,
          ...monitoring.flatMap((value) => ["--set", `${value}.enabled=true`]),
        ],
        { plane },
      );

      // What the release holds is what is there: the previous mode's workload and roles are gone.
      const live = await liveObjects();
      expect([...live.keys()].sort(), `step ${step} (${mode})`).to.deep.equal(await releaseObjects());
      expect(live.has(mode === "per-node" ? "daemonset/cni-repair" : "deployment/cni-repair"), mode).to.equal(true);

      // The authorizer follows RBAC through an informer: wait for this mode's grants, then check them exactly.
      const token = await serviceAccountToken(plane, INSTALL.namespace, INSTALL.serviceAccount);
      await waitFor(
        `the ${mode} permissions`,
        async () =>
          await expectExactGrants(plane, token, mode).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 10_000, intervalMs: 200 },
      );
      await expectExactGrants(plane, token, mode);
      await expectModeVerdicts(plane, mode);

      // The Namespace and the monitoring objects are the very objects of the install.
      expect(await namespaceUid(), `namespace after ${mode}`).to.equal(namespaceBefore);
      const monitoringNow = MONITORING.map((object) => live.get(object));
      for (const [index, uid] of monitoringNow.entries()) expect(uid, MONITORING[index]).to.be.a("string");
      monitoringBefore ??= monitoringNow;
      expect(monitoringNow, `monitoring after ${mode}`).to.deep.equal(monitoringBefore);

      const namespace = await createTestNamespace(plane.kubeConfig().makeApiClient(CoreV1Api), "h");
      const container = await liveContainer(mode);
      await runModeScenario(mode, {
        plane,
        namespace,
        start: async (nodeName, podName) => {
          const run = await runs.start(plane, container, { nodeName, podName }, namespace);
          return run.controller;
        },
      });
      expect(await runs.stop(), `${mode} controller exit`).to.equal(0);
    }
  });
});
