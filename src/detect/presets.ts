// The built-in rules for the meshes we know: Istio and Linkerd CNI validators.

import type { AmbientRule, Rule } from "./rule.js";

/** Istio CNI: the istio-validation init container exits 126 when redirection is missing. */
const istio: Rule = Object.freeze({
  name: "istio",
  initContainer: "istio-validation",
  exitCodes: Object.freeze([126]),
  // Set by the sidecar injector on every injected pod.
  requiredAnnotation: Object.freeze({ key: "sidecar.istio.io/status" }),
  // The istio-cni-node DaemonSet's pods.
  cniAgentSelector: "k8s-app=istio-cni-node",
});

/** Linkerd CNI: linkerd-network-validator exits 95 when redirection is missing. */
const linkerd: Rule = Object.freeze({
  name: "linkerd",
  initContainer: "linkerd-network-validator",
  exitCodes: Object.freeze([95]),
  // Set by the proxy injector on every meshed pod.
  requiredLabel: Object.freeze({ key: "linkerd.io/control-plane-ns" }),
  // The linkerd-cni DaemonSet's pods.
  cniAgentSelector: "k8s-app=linkerd-cni",
});

/** Istio ambient: pods Istio's default selectors put in the mesh must carry redirection "enabled". */
const istioAmbient: AmbientRule = Object.freeze({
  kind: "ambient",
  name: "istio-ambient",
  podSelector: Object.freeze({ key: "istio.io/dataplane-mode", value: "ambient" }),
  namespaceSelector: Object.freeze({ key: "istio.io/dataplane-mode", value: "ambient" }),
  optOut: Object.freeze({ key: "istio.io/dataplane-mode", value: "none" }),
  excludedNamespaces: Object.freeze(["kube-system"]),
  redirectionAnnotation: "ambient.istio.io/redirection",
  sidecarAnnotation: "sidecar.istio.io/status",
  enrollGraceMs: 60_000,
  // The node agent retries enrolment itself, and a pod stuck in "pending" waits for ztunnel: report by default.
  action: "report",
  cniAgentSelector: "k8s-app=istio-cni-node",
  ztunnelSelector: "app=ztunnel",
  ztunnelNamespace: "istio-system",
});

const presets = { istio, linkerd, "istio-ambient": istioAmbient } as const;

export type PresetName = keyof typeof presets;

export const presetNames: readonly PresetName[] = Object.freeze(["istio", "linkerd", "istio-ambient"]);

export const isPresetName = (name: string): name is PresetName => (presetNames as readonly string[]).includes(name);

/** The preset rule with this name, or undefined for an unknown name (the config layer reports it). */
export function presetRule(name: string): Rule | undefined {
  return isPresetName(name) ? presets[name] : undefined;
}
