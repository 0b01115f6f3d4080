// The chart's default priority (its own PriorityClass, cni-repair-critical) is accepted outside kube-system, also
// on an API server that limits the system classes by quota the way managed clusters do (ResourceQuota admission
// with limitedResources for system-node-critical and system-cluster-critical): there a pod with
// system-cluster-critical is refused in the controller's namespace, and the chart's pod is created.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubernetesObject, V1Pod, V1PodSpec } from "@kubernetes/client-node";
import { expect } from "chai";
import { ControlPlane } from "../../harness/control-plane.js";
import { renderChart } from "../../harness/helm.js";
import { kubectl } from "../../harness/kubectl.js";
import { applyNamespace, INSTALL, workloadOf } from "../../harness/overlays.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";

const LIMIT_SYSTEM_CLASSES = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ResourceQuota
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: ResourceQuotaConfiguration
      limitedResources:
        - resource: pods
          matchScopes:
            - scopeName: PriorityClass
              operator: In
              values: ["system-node-critical", "system-cluster-critical"]
`;

describe("chart: the default priority class is accepted outside kube-system", function () {
  this.timeout(5 * 60_000);
  let plane: ControlPlane;

  before(async () => {
    const config = join(ownedTempDir("cni-repair-admission-"), "admission.yaml");
    writeFileSync(config, LIMIT_SYSTEM_CLASSES);
    plane = await ControlPlane.start({ apiServerArgs: [`--admission-control-config-file=${config}`] });
    await applyNamespace(plane);
  });

  after(async () => {
    await plane?.stop();
  });

  /** Creates (for real) the pod the chart's workload would create, with this priority class; "created" or the refusal. */
  const createPod = async (name: string, spec: V1PodSpec) => {
    const pod: V1Pod = { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: INSTALL.namespace }, spec };
    return await kubectl(["create", "-o", "name", "-f", "-"], { plane, input: JSON.stringify(pod) }).then(
      (out) => out.trim(),
      (error: Error) => error.message,
    );
  };

  it("the chart's pod is created with cni-repair-critical; with system-cluster-critical it would be refused", async () => {
    const rendered = await renderChart("cluster");
    const spec = workloadOf(rendered).spec?.template.spec as V1PodSpec;
    expect(spec.priorityClassName).to.equal("cni-repair-critical");
    // Install the chart's PriorityClass, as helm install would.
    const priorityClass = rendered.objects.find((object) => object.kind === "PriorityClass") as KubernetesObject;
    await kubectl(["apply", "--server-side", "-f", "-"], { plane, input: JSON.stringify(priorityClass) });

    expect(await createPod("with-chart-default", spec)).to.equal("pod/with-chart-default");
    const created = JSON.parse(
      await kubectl(["get", "pod", "with-chart-default", "--namespace", INSTALL.namespace, "-o", "json"], { plane }),
    ) as V1Pod;
    // The Priority admission plugin resolved the class: above every ordinary workload, below the system classes.
    expect(created.spec?.priority).to.equal(1_000_000_000);

    const refused = await createPod("with-system-class", { ...spec, priorityClassName: "system-cluster-critical" });
    expect(refused).to.match(
      /insufficient quota to match these scopes.*PriorityClass In \[system-node-critical system-cluster-critical\]/,
    );
  });
});
