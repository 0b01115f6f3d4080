// What `run` would decide about one pod right now, from a parts's caches: detection, the mode under the pod's
// rule, the guard view and the one policy function. Shared by `scan` and `explain`; it writes nothing.
import type { Config, Mode } from "../config/config.js";
import { type DetectContext, detect, type Verdict } from "../detect/detect.js";
import { type PodFacts, podKey } from "../detect/facts.js";
import type { Paces } from "../safety/guards.js";
import type { GuardView } from "../safety/policy.js";
import { type Decision, decide, isPaced, modeFor } from "../safety/policy.js";
import type { ControllerParts } from "./compose.js";

export type Judgement = {
  readonly verdict: Verdict;
  /** The action `run` takes for this pod's rule in the configured mode (ambient rules report in delete mode). */
  readonly mode: Mode | undefined;
  readonly guards: GuardView;
  readonly decision: Decision;
};

/** `paces`: a copy of the deletion paces (SafetyGuards.dryPaces) that this call spends from when the pod is paced. */
export function judgePod(
  config: Config,
  parts: ControllerParts,
  facts: PodFacts,
  paces: Paces,
  options: { mode?: Mode } = {},
): Judgement {
  const verdict = detect(facts, config.rules, oneShotContext(parts));
  if (!verdict.broken) return { verdict, mode: undefined, guards: {}, decision: { kind: "healthy" } };
  const mode = modeFor(options.mode ?? config.mode, config.rules, verdict.rule);
  const guards = mode === "label" ? {} : parts.guards.view(facts, verdict.rule, { paces });
  const decision = decide({
    facts,
    verdict,
    mode,
    label: config.label,
    alreadyHandled: false,
    deleteBarePods: config.deleteBarePods,
    guards,
  });
  if (isPaced(decision)) parts.guards.commitPace(podKey(facts.namespace, facts.name), guards, paces);
  return { verdict, mode, guards, decision };
}

/**
 * Detection's context for a one-shot command. It has no memory of when a pod entered ambient scope, and its guards
 * go by the kubelet's Ready time of the agents (startSynced): it goes by the pod's and the kubelet's own times.
 */
export function oneShotContext(parts: ControllerParts): DetectContext {
  return { ...parts.context(), seenUnenrolledSince: undefined };
}

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
