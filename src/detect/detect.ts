// Decides whether a pod is broken: a mesh validator init container rejected it for missing traffic redirection.

import type { InitContainerFacts, PodFacts, Termination } from "./facts.js";
import type { Marker, Rule } from "./rule.js";

export type Verdict =
  | { readonly broken: false }
  | {
      readonly broken: true;
      readonly rule: string;
      readonly reason: string;
      /** Phase Failed or Succeeded: report it, but the caller must not delete it. */
      readonly terminal: boolean;
    };

const NOT_BROKEN: Verdict = Object.freeze({ broken: false });

const carries = (values: Readonly<Record<string, string>>, marker: Marker | undefined): boolean =>
  marker === undefined ||
  (Object.hasOwn(values, marker.key) && (marker.value === undefined || values[marker.key] === marker.value));

const matches = (t: Termination, rule: Rule): boolean =>
  rule.exitCodes.includes(t.exitCode) &&
  // An empty substring is treated as unset, matching factsSchema (which then keeps no messages).
  (rule.messageContains === undefined ||
    rule.messageContains === "" ||
    t.message?.includes(rule.messageContains) === true);

/** Where the rejection shows: "state" (terminated now, e.g. restartPolicy Never) or "lastState" (restart loop). */
function rejection(c: InitContainerFacts, rule: Rule): { where: string; t: Termination } | undefined {
  const state = c.state;
  if (typeof state !== "string") {
    // The validator has since passed: redirection is in place now, nothing to repair.
    if (state.exitCode === 0) return undefined;
    if (matches(state, rule)) return { where: "state", t: state };
  }
  const last = c.lastTermination;
  return last !== undefined && matches(last, rule) ? { where: "lastState", t: last } : undefined;
}

function underRule(facts: PodFacts, rule: Rule): Verdict | undefined {
  if (!carries(facts.annotations, rule.requiredAnnotation) || !carries(facts.labels, rule.requiredLabel)) {
    return undefined;
  }
  const container = facts.initContainers.find((c) => c.name === rule.initContainer);
  const found = container === undefined ? undefined : rejection(container, rule);
  if (found === undefined) return undefined;
  return {
    broken: true,
    rule: rule.name,
    reason: `${rule.initContainer} exited ${found.t.exitCode} (${found.where})`,
    terminal: facts.phase === "Failed" || facts.phase === "Succeeded",
  };
}

/** The first rule whose markers the pod carries, broken or not: the mesh it belongs to. */
export function meshRule(facts: PodFacts, rules: readonly Rule[]): Rule | undefined {
  return rules.find(
    (rule) => carries(facts.annotations, rule.requiredAnnotation) && carries(facts.labels, rule.requiredLabel),
  );
}

/** The verdict under the first rule (in order) the pod is broken under. Pure. */
export function detect(facts: PodFacts, rules: readonly Rule[]): Verdict {
  // Already going away: deleting it again would repair nothing.
  if (facts.deleting) return NOT_BROKEN;
  for (const rule of rules) {
    const verdict = underRule(facts, rule);
    if (verdict !== undefined) return verdict;
  }
  return NOT_BROKEN;
}
