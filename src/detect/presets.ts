// The built-in rules for the meshes we know: Istio and Linkerd CNI validators.

import type { AmbientRule, Rule, ValidatorRule } from "./rule.js";

/**
 * A sidecar mesh's validator: `initContainer` exits `exitCode` when redirection is missing. Only pods carrying the
 * injector's mark are meshed; `cniAgentSelector` picks the mesh's CNI DaemonSet pods.
 */
function validatorRule(
  name: string,
  initContainer: string,
  exitCode: number,
  injectorMark: { readonly annotation: string } | { readonly label: string },
  cniAgentSelector: string,
  startupTaintKey?: string,
): ValidatorRule {
  const mark =
    "annotation" in injectorMark
      ? { requiredAnnotation: Object.freeze({ key: injectorMark.annotation }) }
      : { requiredLabel: Object.freeze({ key: injectorMark.label }) };
  return Object.freeze({
    name,
    initContainer,
    exitCodes: Object.freeze([exitCode]),
    ...mark,
    cniAgentSelector,
    ...(startupTaintKey === undefined ? {} : { startupTaintKey }),
  });
}

/** Istio's own untaint controller (istiod) removes this key; Cilium uses node.cilium.io/agent-not-ready. */
const ISTIO_STARTUP_TAINT_KEY = "cni.istio.io/not-ready";
/** For meshes without a taint of their own (Linkerd, custom rules): documented in docs/startup-taints.md. */
export const GENERIC_STARTUP_TAINT_KEY = "cni-repair.io/agent-not-ready";

/** Istio CNI; the sidecar injector annotates every injected pod. */
const istio = validatorRule(
  "istio",
  "istio-validation",
  126,
  { annotation: "sidecar.istio.io/status" },
  "k8s-app=istio-cni-node",
  ISTIO_STARTUP_TAINT_KEY,
);
/** Linkerd CNI; the proxy injector labels every meshed pod. */
const linkerd = validatorRule(
  "linkerd",
  "linkerd-network-validator",
  95,
  { label: "linkerd.io/control-plane-ns" },
  "k8s-app=linkerd-cni",
);

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
  startupTaintKey: ISTIO_STARTUP_TAINT_KEY,
  ztunnelSelector: "app=ztunnel",
  ztunnelNamespace: "istio-system",
});

/**
 * Every built-in rule by name: the one source of their values. The flags that tune a preset (--ambient-*,
 * --ztunnel-*) take their defaults from here (config/flags.ts), so editing a value here changes the default.
 */
export const PRESETS = Object.freeze({ istio, linkerd, "istio-ambient": istioAmbient });

export type Presets = typeof PRESETS;
export type PresetName = keyof Presets;

export const presetNames: readonly PresetName[] = Object.freeze(["istio", "linkerd", "istio-ambient"]);

export const isPresetName = (name: string): name is PresetName => (presetNames as readonly string[]).includes(name);

/** The preset rule with this name, or undefined for an unknown name (the config layer reports it). */
export function presetRule(name: string): Rule | undefined {
  return isPresetName(name) ? PRESETS[name] : undefined;
}
