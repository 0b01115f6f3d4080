// The built-in rules for the meshes we know: Istio and Linkerd CNI validators.

import type { Rule } from "./rule.js";

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

const presets = { istio, linkerd } as const;

export type PresetName = keyof typeof presets;

export const presetNames: readonly PresetName[] = Object.freeze(["istio", "linkerd"]);

export const isPresetName = (name: string): name is PresetName => (presetNames as readonly string[]).includes(name);

/** The preset rule with this name, or undefined for an unknown name (the config layer reports it). */
export function presetRule(name: string): Rule | undefined {
  return isPresetName(name) ? presets[name] : undefined;
}
