// Decides whether a pod is broken: a mesh validator init container rejected it for missing traffic redirection,
// or (Istio ambient) it should be enrolled with ztunnel and is not.

import { type DetectContext, type GraceStart, inAmbientScope, judgeAmbient } from "./ambient.js";
import { type InitContainerFacts, isFinished, type PodFacts, type Termination } from "./facts.js";
import { isAmbient, type Marker, type Rule, type ValidatorRule } from "./rule.js";

export type { DetectContext, GraceStart } from "./ambient.js";

export type Verdict =
  /**
   * recheckAfterMs: not broken yet, but it may become so by the passing of time alone (ambient grace, counted
   * from graceStart).
   */
  | { readonly broken: false; readonly recheckAfterMs?: number; readonly graceStart?: GraceStart }
  | {
      readonly broken: true;
      readonly rule: string;
      readonly reason: string;
      /** Phase Failed or Succeeded: report it, but the caller must not delete it. */
      readonly terminal: boolean;
      /** Ambient: when the enrolment grace that has now run out started, and why. */
      readonly graceStart?: GraceStart;
    };

const NOT_BROKEN: Verdict = Object.freeze({ broken: false });

/** For validator-only rule sets, which need neither the clock nor namespace labels. */
export const NO_CONTEXT: DetectContext = Object.freeze({ nowMs: 0, namespaceLabel: () => undefined });

const carries = (values: Readonly<Record<string, string>>, marker: Marker | undefined): boolean =>
  marker === undefined ||
  (Object.hasOwn(values, marker.key) && (marker.value === undefined || values[marker.key] === marker.value));

const matches = (t: Termination, rule: ValidatorRule): boolean =>
  rule.exitCodes.includes(t.exitCode) &&
  // An empty substring is treated as unset, matching factsSchema (which then keeps no messages).
  (rule.messageContains === undefined ||
    rule.messageContains === "" ||
    t.message?.includes(rule.messageContains) === true);

/** Where the rejection shows: "state" (terminated now, e.g. restartPolicy Never) or "lastState" (restart loop). */
export function rejection(c: InitContainerFacts, rule: ValidatorRule): { where: string; t: Termination } | undefined {
  const state = c.state;
  if (typeof state !== "string") {
    // The validator has since passed: redirection is in place now, nothing to repair.
    if (state.exitCode === 0) return undefined;
    if (matches(state, rule)) return { where: "state", t: state };
  }
  const last = c.lastTermination;
  return last !== undefined && matches(last, rule) ? { where: "lastState", t: last } : undefined;
}

const carriesMarkers = (facts: PodFacts, rule: ValidatorRule): boolean =>
  carries(facts.annotations, rule.requiredAnnotation) && carries(facts.labels, rule.requiredLabel);

function underValidator(facts: PodFacts, rule: ValidatorRule): Verdict | undefined {
  if (!carriesMarkers(facts, rule)) return undefined;
  const container = facts.initContainers.find((c) => c.name === rule.initContainer);
  const found = container === undefined ? undefined : rejection(container, rule);
  if (found === undefined) return undefined;
  return {
    broken: true,
    rule: rule.name,
    reason: `${rule.initContainer} exited ${found.t.exitCode} (${found.where})`,
    terminal: isFinished(facts),
  };
}

/** The first rule the pod falls under, broken or not: the mesh it belongs to (the storm breaker's denominator). */
export function meshRule(
  facts: PodFacts,
  rules: readonly Rule[],
  context: DetectContext = NO_CONTEXT,
): Rule | undefined {
  return rules.find((rule) => (isAmbient(rule) ? inAmbientScope(facts, rule, context) : carriesMarkers(facts, rule)));
}

/**
 * The verdict under the first rule (in order) the pod is broken under; otherwise the soonest time at which
 * the passing of time alone could make it broken. Pure: the clock and namespace labels come in the context.
 */
export function detect(facts: PodFacts, rules: readonly Rule[], context: DetectContext = NO_CONTEXT): Verdict {
  // Already going away: deleting it again would repair nothing.
  if (facts.deleting) return NOT_BROKEN;
  let waiting: { readonly recheckAfterMs: number; readonly graceStart: GraceStart } | undefined;
  for (const rule of rules) {
    if (!isAmbient(rule)) {
      const verdict = underValidator(facts, rule);
      if (verdict !== undefined) return verdict;
      continue;
    }
    const judgement = judgeAmbient(facts, rule, context);
    if (judgement?.broken) {
      return {
        broken: true,
        rule: rule.name,
        reason: judgement.reason,
        terminal: false,
        graceStart: judgement.graceStart,
      };
    }
    if (judgement && (waiting === undefined || judgement.recheckAfterMs < waiting.recheckAfterMs)) {
      waiting = { recheckAfterMs: judgement.recheckAfterMs, graceStart: judgement.graceStart };
    }
  }
  return waiting === undefined ? NOT_BROKEN : { broken: false, ...waiting };
}
