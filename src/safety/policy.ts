// The safety policy, all of it: given a verdict, the pod's facts and what the guards see (the deletion pace as a
// peek), what to do with the pod now, in the one guard order. Pure. Safety.judge (safety.ts) gathers the guard view
// and calls this one function for run, scan and explain alike, then carries out what the decision reserves.
import type { Mode } from "../config/config.js";
import type { Verdict } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import type { FallbackBasis } from "../detect/istio-repair-settings.js";
import { isAmbient, type Rule } from "../detect/rule.js";
import type { HoldReason } from "./hold-reasons.js";

/** Why a delete stands in for Istio's in-place repair. */
export type MeshFallback = { readonly basis: FallbackBasis; readonly detail: string };

export type Decision =
  /** Nothing is wrong with the pod (any longer). */
  | { readonly kind: "healthy" }
  /** Act now: the mode's action; `fallback`: why it is done in place of Istio's own repair (the Event says). */
  | { readonly kind: "act"; readonly action: Mode; readonly fallback?: MeshFallback }
  /**
   * Broken, but not to be deleted now. `retryAfterMs`: look again then (otherwise a guard change or the
   * resync brings it back); `label`: mark it for a human meanwhile (a bare pod nothing would recreate).
   */
  | {
      readonly kind: "hold";
      readonly reason: HoldReason;
      readonly detail: string;
      readonly retryAfterMs?: number;
      readonly label?: boolean;
      /** No BrokenPodHeld Event: the API server asked us to wait, another write to it now would not help. */
      readonly quiet?: boolean;
    }
  /** Broken, and already handled: nothing more to do. */
  | { readonly kind: "skip"; readonly reason: string };

/** What the stateful guards say about this pod right now; absent fields mean "no objection". */
export type GuardView = {
  /** The replacement of a pod we deleted came back broken on the same node. */
  readonly loop?: { readonly waitMs: number; readonly detail: string };
  /** Too many meshed pods broken at once on the node or in the cluster. */
  readonly storm?: { readonly detail: string };
  /** A node agent (CNI agent, ztunnel) is not Ready (long enough); waitMs when it only needs more time. */
  readonly agent?: {
    readonly reason: "cni_agent_not_ready" | "ztunnel_not_ready";
    readonly waitMs?: number;
    readonly detail: string;
  };
  /** A cap on pods we deleted that are still terminating. */
  readonly inflight?: { readonly reason: "node_inflight" | "namespace_inflight"; readonly detail: string };
  /**
   * The deletion pace, peeked: waitMs > 0 when this pod's turn has not come. The cluster-wide pace, or the outage
   * pace when `outage` is set.
   */
  readonly pace?: { readonly waitMs: number; readonly detail: string };
  /** An agent outage explains the breakage: the pod is under the outage pace (SafetyGuards.view decides). */
  readonly outage?: { readonly detail: string };
  /** Istio repairs this pod itself: in place and may still fix it (pending), or it deletes/labels (active). */
  readonly meshRepair?: {
    readonly reason: "mesh_repair_pending" | "mesh_repair_active";
    readonly detail: string;
    readonly waitMs?: number;
  };
  /** Istio repairs in place but evidently did not fix this pod: a delete is Istio's fallback, and says why. */
  readonly meshFallback?: MeshFallback;
};

export type PolicyInput = {
  readonly facts: PodFacts;
  readonly verdict: Verdict;
  readonly mode: Mode;
  readonly label: { readonly key: string; readonly value: string };
  /** True when this controller already acted on this pod UID (deleted it, or reported it). */
  readonly alreadyHandled: boolean;
  readonly deleteBarePods: boolean;
  readonly guards: GuardView;
  /** How long the API server asked us to wait before the next write for this pod (Retry-After); 0 or absent: none. */
  readonly throttledMs?: number;
};

export function decide(input: PolicyInput): Decision {
  const decision = guarded(input);
  // Whatever the guards say, no write for this pod before the server's Retry-After: a watch event or a resync may
  // bring it back sooner. Asked only of an action, so a held pod keeps its own reason (and a paced one its turn).
  const waitMs = input.throttledMs ?? 0;
  if (decision.kind !== "act" || waitMs <= 0) return decision;
  return {
    kind: "hold",
    reason: "throttled",
    detail: `the API server asked us to wait (Retry-After); next try in ${Math.ceil(waitMs / 1000)} s`,
    retryAfterMs: waitMs,
    quiet: true,
  };
}

function guarded(input: PolicyInput): Decision {
  const { facts, verdict, mode, label, guards } = input;
  if (!verdict.broken) return { kind: "healthy" };
  // Labelling is harmless and is how a human finds the pod, so label mode labels every broken pod.
  if (mode === "label") {
    return isLabelled(facts, label)
      ? { kind: "skip", reason: `already labelled ${label.key}=${label.value}` }
      : { kind: "act", action: "label" };
  }
  // A Failed/Succeeded pod is finished: its owner has given up on it or replaced it; deleting it repairs nothing.
  if (verdict.terminal)
    return { kind: "hold", reason: "terminal", detail: `the pod has finished (phase ${facts.phase})` };
  if (input.alreadyHandled) {
    return { kind: "skip", reason: mode === "delete" ? "already deleted by us" : "already reported" };
  }
  // The kubelet runs a static pod from a file and re-creates its mirror: deleting the mirror repairs nothing.
  if (facts.staticPod) {
    return {
      kind: "hold",
      reason: "static_pod",
      detail: `a static pod's mirror on node ${facts.nodeName ?? "?"}: deleting it repairs nothing (restart it on the node)`,
    };
  }
  // Nothing would recreate a pod without a controlling owner: deleting it would lose the workload.
  if (facts.owner === undefined && !input.deleteBarePods) {
    return {
      kind: "hold",
      reason: "bare_pod",
      detail: "no controlling owner would recreate it (--delete-bare-pods to delete anyway)",
      label: mode === "delete" && !isLabelled(facts, label),
    };
  }
  if (guards.loop && guards.loop.waitMs > 0) {
    return { kind: "hold", reason: "loop_backoff", detail: guards.loop.detail, retryAfterMs: guards.loop.waitMs };
  }
  // The agent before the storm: when the node's agent is down, that is the cause to name (and alert on).
  if (guards.agent) return holdFor(guards.agent);
  // After the agent (a down agent is the cause to name), before the storm: Istio's repair of these pods comes first.
  if (guards.meshRepair) return holdFor(guards.meshRepair);
  if (guards.storm) return { kind: "hold", reason: "storm", detail: guards.storm.detail };
  const act = { kind: "act", action: mode, ...(guards.meshFallback && { fallback: guards.meshFallback }) } as const;
  // In report mode nothing is deleted, so nothing is in flight or paced: only the guards above apply.
  if (mode !== "delete") return act;
  if (guards.inflight) return { kind: "hold", reason: guards.inflight.reason, detail: guards.inflight.detail };
  // The last gate, asked only once every other guard agreed: the cluster-wide deletion pace.
  if (guards.pace && guards.pace.waitMs > 0) {
    return { kind: "hold", reason: "rate_limit", detail: guards.pace.detail, retryAfterMs: guards.pace.waitMs };
  }
  return act;
}

/**
 * A pod held for its turn keeps it: its reservation stays (held pods wake once, in order) and its retry failures
 * carry over the wait. Every other hold gives a reserved turn back.
 */
export const keepsTurn = (decision: Decision): boolean => decision.kind === "hold" && decision.reason === "rate_limit";

/** Decisions that take part in the deletion pace: a delete spends a turn, a rate_limit hold reserves one. */
export const isPaced = (decision: Decision): boolean =>
  (decision.kind === "act" && decision.action === "delete") || keepsTurn(decision);

/** The one word for what happens to the pod: the mode's action, "hold", "skip" or "none" (healthy). */
export function actionOf(decision: Decision): string {
  switch (decision.kind) {
    case "act":
      return decision.action;
    case "hold":
      // A bare pod in delete mode is held from deletion but labelled for a human: the write that happens.
      return decision.label ? "label" : "hold";
    case "skip":
      return "skip";
    case "healthy":
      return "none";
  }
}

/** Delete mode deletes, except under rules whose own action is to report (ambient, by default). */
export function modeFor(mode: Mode, rules: readonly Rule[], ruleName: string): Mode {
  if (mode !== "delete") return mode;
  const rule = rules.find((r) => r.name === ruleName);
  return rule && isAmbient(rule) ? rule.action : "delete";
}

const isLabelled = (facts: PodFacts, label: { key: string; value: string }): boolean =>
  facts.labels[label.key] === label.value;

/** A guard's objection that names its own hold reason, and a wait when time alone will lift it. */
function holdFor(objection: {
  readonly reason: HoldReason;
  readonly detail: string;
  readonly waitMs?: number;
}): Decision {
  const { reason, detail, waitMs } = objection;
  return { kind: "hold", reason, detail, ...(waitMs !== undefined && { retryAfterMs: waitMs }) };
}
