// Istio ambient: a pod that should be captured by ztunnel, running past the grace period, but not enrolled.
import type { PodFacts } from "./facts.js";
import type { AmbientRule } from "./rule.js";

/** What detection needs beyond the pod itself: the time, and namespace labels (from our namespace watch). */
export type DetectContext = {
  readonly nowMs: number;
  readonly namespaceLabel: (namespace: string, key: string) => string | undefined;
};

export type AmbientJudgement =
  | { readonly broken: true; readonly reason: string }
  /** In scope and not enrolled yet, but within the grace period: look again after this long. */
  | { readonly broken: false; readonly recheckAfterMs: number }
  | undefined;

/** Istio's default enablement: the pod's label, or its namespace's label unless the pod opts out. */
export function inAmbientScope(facts: PodFacts, rule: AmbientRule, context: DetectContext): boolean {
  if (facts.hostNetwork) return false;
  // Sidecar wins: such a pod is judged by the sidecar rules only.
  if (Object.hasOwn(facts.annotations, rule.sidecarAnnotation)) return false;
  if (rule.excludedNamespaces.includes(facts.namespace)) return false;
  if (facts.labels[rule.podSelector.key] === rule.podSelector.value) return true;
  return (
    context.namespaceLabel(facts.namespace, rule.namespaceSelector.key) === rule.namespaceSelector.value &&
    facts.labels[rule.optOut.key] !== rule.optOut.value
  );
}

/** Undefined when the pod is out of scope, enrolled, or not running yet. */
export function judgeAmbient(facts: PodFacts, rule: AmbientRule, context: DetectContext): AmbientJudgement {
  if (!inAmbientScope(facts, rule, context)) return undefined;
  const redirection = facts.annotations[rule.redirectionAnnotation];
  if (redirection === "enabled") return undefined;
  // Not running yet: enrolment happens at sandbox setup, and the change to running brings the pod back.
  if (facts.runningSinceMs === undefined) return undefined;
  const elapsedMs = context.nowMs - facts.runningSinceMs;
  if (elapsedMs < rule.enrollGraceMs) return { broken: false, recheckAfterMs: rule.enrollGraceMs - elapsedMs };
  const state =
    redirection === undefined
      ? "annotation missing"
      : redirection === "pending"
        ? "pending"
        : `annotation "${redirection}"`;
  return { broken: true, reason: `not enrolled: ${state} for ${Math.round(elapsedMs / 1000)} s` };
}
