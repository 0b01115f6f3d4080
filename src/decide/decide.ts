// The safety policy: given a verdict, what to do with the pod now. Pure; the reconciler carries it out.

import type { Mode } from "../config/config.js";
import type { Verdict } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";

export type Decision =
  /** Nothing is wrong with the pod (any longer). */
  | { readonly kind: "healthy" }
  /** Act now: the mode's action. */
  | { readonly kind: "act"; readonly action: Mode }
  /** Broken, but not to be acted on now; the reason says why. */
  | { readonly kind: "hold"; readonly reason: HoldReason }
  /** Broken, and already handled: nothing more to do. */
  | { readonly kind: "skip"; readonly reason: string };

export type HoldReason = "terminal";

export type PolicyInput = {
  readonly facts: PodFacts;
  readonly verdict: Verdict;
  readonly mode: Mode;
  readonly label: { readonly key: string; readonly value: string };
  /** True when this controller already acted on this pod UID (deleted it, or reported it). */
  readonly alreadyHandled: boolean;
};

export function decide(input: PolicyInput): Decision {
  const { facts, verdict, mode, label } = input;
  if (!verdict.broken) return { kind: "healthy" };
  // Labelling is how a human finds the pod, so it applies to terminal pods too; only deletion waits.
  if (mode === "label") {
    return facts.labels[label.key] === label.value
      ? { kind: "skip", reason: `already labelled ${label.key}=${label.value}` }
      : { kind: "act", action: "label" };
  }
  // A Failed/Succeeded pod is finished: its owner has given up on it or replaced it, and deleting it
  // repairs nothing.
  if (verdict.terminal) return { kind: "hold", reason: "terminal" };
  if (input.alreadyHandled) {
    return { kind: "skip", reason: mode === "delete" ? "already deleted by us" : "already reported" };
  }
  return { kind: "act", action: mode };
}
