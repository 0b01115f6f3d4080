// Istio ambient: a pod that should be captured by ztunnel but is still not enrolled a grace period after it could
// have been: after its sandbox was set up, it entered ambient scope, and its node's agents turned Ready.
import { isFinished, type PodFacts } from "./facts.js";
import type { AmbientRule } from "./rule.js";

/** The moment an enrolment grace counts from, and why (for logs, and for `explain`). */
export type GraceStart = { readonly atMs: number; readonly cause: string };

/**
 * When the rule's node agents (CNI agent, ztunnel) that are Ready on a node turned Ready: the latest of them. An
 * agent with none Ready adds nothing: its gate holds the pod. (safety/agent-readiness.ts answers it.)
 */
export type AgentGraceStarts = { graceStart(node: string, rule: string): GraceStart | undefined };

/** What detection needs beyond the pod itself: the time, namespace labels, and what this controller observed. */
export type DetectContext = {
  readonly nowMs: number;
  readonly namespaceLabel: (namespace: string, key: string) => string | undefined;
  /**
   * When this controller first saw the pod (by UID) in ambient scope and not enrolled, by its own clock: a label
   * change seen live, or its first sight after a start. Absent where nothing keeps that memory (scan).
   */
  readonly seenUnenrolledSince?: ((uid: string) => number | undefined) | undefined;
  /** The node agents' readiness: the grace counts from their latest Ready transition (as the command goes by). */
  readonly readiness?: AgentGraceStarts | undefined;
};

export type AmbientJudgement =
  | { readonly broken: true; readonly reason: string; readonly graceStart: GraceStart }
  /** In scope and not enrolled yet, but within the grace period: look again after this long. */
  | { readonly broken: false; readonly recheckAfterMs: number; readonly graceStart: GraceStart }
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

/**
 * In scope, not enrolled, and still alive: the pods whose enrolment is awaited. A finished (Failed, Succeeded) or
 * departing pod has no traffic left to capture, so whether it was enrolled no longer matters.
 */
export function awaitsEnrolment(facts: PodFacts, rule: AmbientRule, context: DetectContext): boolean {
  if (facts.deleting || isFinished(facts)) return false;
  return facts.annotations[rule.redirectionAnnotation] !== "enabled" && inAmbientScope(facts, rule, context);
}

/**
 * The latest of: the sandbox set up (the CNI agent enrols there, so a crash-looping app does not delay it), the
 * pod seen entering scope, and its node's agents turning Ready. Undefined while the pod has no sandbox.
 */
export function graceStart(facts: PodFacts, rule: AmbientRule, context: DetectContext): GraceStart | undefined {
  if (facts.sandboxSinceMs === undefined) return undefined;
  let start: GraceStart = { atMs: facts.sandboxSinceMs, cause: "pod sandbox set up" };
  const seenAt = context.seenUnenrolledSince?.(facts.uid);
  if (seenAt !== undefined && seenAt > start.atMs) {
    start = { atMs: seenAt, cause: "entered ambient scope (seen by this controller)" };
  }
  const agents = context.readiness?.graceStart(facts.nodeName ?? "", rule.name);
  if (agents !== undefined && agents.atMs > start.atMs) start = agents;
  return start;
}

/** Undefined when the pod does not await enrolment, or has no sandbox yet. */
export function judgeAmbient(facts: PodFacts, rule: AmbientRule, context: DetectContext): AmbientJudgement {
  if (!awaitsEnrolment(facts, rule, context)) return undefined;
  const start = graceStart(facts, rule, context);
  // No sandbox yet: enrolment happens at sandbox setup, and that change brings the pod back.
  if (start === undefined) return undefined;
  const elapsedMs = context.nowMs - start.atMs;
  if (elapsedMs < rule.enrollGraceMs) {
    return { broken: false, recheckAfterMs: rule.enrollGraceMs - elapsedMs, graceStart: start };
  }
  const redirection = facts.annotations[rule.redirectionAnnotation];
  const state =
    redirection === undefined
      ? "annotation missing"
      : redirection === "pending"
        ? "pending"
        : `annotation "${redirection}"`;
  return {
    broken: true,
    reason: `not enrolled: ${state} for ${Math.round(elapsedMs / 1000)} s`,
    graceStart: start,
  };
}

/** For logs: the grace start as a timestamp and its cause. */
export const describeGraceStart = (start: GraceStart): string =>
  `${new Date(start.atMs).toISOString()} (${start.cause})`;
