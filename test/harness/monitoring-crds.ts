// The Prometheus Operator's two kinds the monitoring objects use, as minimal CRDs (any spec is accepted): enough for
// the API server to store ServiceMonitors and PrometheusRules, so installs and mode switches can show they survive.
// Their real schemas are the Operator's; what the objects hold is checked by the render and Prometheus tests.
import type { ControlPlane } from "./control-plane.js";
import { kubectl } from "./kubectl.js";

const KINDS = [
  { kind: "ServiceMonitor", plural: "servicemonitors" },
  { kind: "PrometheusRule", plural: "prometheusrules" },
] as const;

const crd = ({ kind, plural }: (typeof KINDS)[number]) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.monitoring.coreos.com` },
  spec: {
    group: "monitoring.coreos.com",
    scope: "Namespaced",
    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    ],
  },
});

export async function installMonitoringCrds(plane: ControlPlane): Promise<void> {
  const list = { apiVersion: "v1", kind: "List", items: KINDS.map(crd) };
  await kubectl(["apply", "--server-side", "-f", "-"], { plane, input: JSON.stringify(list) });
  await kubectl(
    [
      "wait",
      "--for=condition=Established",
      "--timeout=30s",
      ...KINDS.map((k) => `crd/${k.plural}.monitoring.coreos.com`),
    ],
    { plane },
  );
}

export async function removeMonitoringCrds(plane: ControlPlane): Promise<void> {
  const names = KINDS.map((k) => `crd/${k.plural}.monitoring.coreos.com`);
  await kubectl(["delete", "--ignore-not-found", ...names], { plane });
}
