// manifests/monitoring rendered by the real kustomize: the plain files inside, and a target in every overlay.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type KubernetesObject,
  loadAllYaml,
  loadYaml,
  type V1ConfigMap,
  type V1Service,
} from "@kubernetes/client-node";
import { expect } from "chai";
import { kubectl } from "../../harness/kubectl.js";
import { monitoringDir } from "../../harness/monitoring-files.js";
import { INSTALL, OVERLAYS, objectsOfKind, renderOverlay, workloadOf } from "../../harness/overlays.js";

type ServiceMonitor = KubernetesObject & {
  spec: { jobLabel?: string; selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
};
type PrometheusRule = KubernetesObject & { spec: unknown };

describe("manifests/monitoring rendered with kustomize", function () {
  this.timeout(60_000);
  let objects: KubernetesObject[];
  const one = <T extends KubernetesObject>(kind: string): T => {
    const found = objects.filter((object) => object.kind === kind);
    expect(found, kind).to.have.length(1);
    return found[0] as T;
  };

  before(async () => {
    objects = loadAllYaml(await kubectl(["kustomize", monitoringDir()])) as KubernetesObject[];
  });

  it("holds a ServiceMonitor, a PrometheusRule and the dashboard ConfigMap, all in the controller's namespace", () => {
    expect(objects.map((object) => `${object.apiVersion}/${object.kind}`).sort()).to.deep.equal([
      "monitoring.coreos.com/v1/PrometheusRule",
      "monitoring.coreos.com/v1/ServiceMonitor",
      "v1/ConfigMap",
    ]);
    for (const object of objects) expect(object.metadata?.namespace).to.equal(INSTALL.namespace);
  });

  it("the ConfigMap carries dashboard.json byte for byte, with the Grafana sidecar's label", () => {
    const configMap = one<V1ConfigMap>("ConfigMap");
    expect(configMap.metadata?.name).to.equal("cni-repair-dashboard");
    expect(configMap.metadata?.labels).to.include({ grafana_dashboard: "1" });
    expect(configMap.data?.["cni-repair.json"]).to.equal(readFileSync(join(monitoringDir(), "dashboard.json"), "utf8"));
  });

  it("the PrometheusRule's spec is alerts.yaml", () => {
    const alerts = loadYaml(readFileSync(join(monitoringDir(), "alerts.yaml"), "utf8"));
    expect(one<PrometheusRule>("PrometheusRule").spec).to.deep.equal(alerts);
  });

  for (const overlay of OVERLAYS) {
    it(`the ServiceMonitor finds the metrics port of the ${overlay} overlay's pods, as job "cni-repair"`, async () => {
      const monitor = one<ServiceMonitor>("ServiceMonitor");
      const rendered = await renderOverlay(overlay);
      const selected = objectsOfKind<V1Service>(rendered, "Service").filter(
        (service) =>
          service.metadata?.namespace === monitor.metadata?.namespace &&
          Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => service.metadata?.labels?.[k] === v),
      );
      expect(selected, "services the ServiceMonitor selects").to.have.length(1);
      const service = selected[0] as V1Service;
      // The alerts select job="cni-repair": the ServiceMonitor names the job after this Service label.
      expect(service.metadata?.labels?.[monitor.spec.jobLabel ?? ""]).to.equal("cni-repair");
      for (const endpoint of monitor.spec.endpoints) {
        expect(service.spec?.ports?.map((port) => port.name)).to.include(endpoint.port);
      }
      const podLabels = workloadOf(rendered).spec?.template.metadata?.labels ?? {};
      expect(podLabels).to.include(service.spec?.selector ?? { missing: "selector" });
      const container = workloadOf(rendered).spec?.template.spec?.containers[0];
      const servicePort = service.spec?.ports?.find((port) => port.name === "metrics");
      expect(container?.ports?.map((port) => port.name)).to.include(servicePort?.targetPort);
    });
  }
});
