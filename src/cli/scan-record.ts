// One structured record per broken pod for `scan` (and its JSON output): who the pod is, why it is broken, what
// `run` would do with it, and after --repair what the API server answered.
import type { RepairOutcome } from "../act/repairer.js";
import type { Config } from "../config/config.js";
import { rejection, type Verdict } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import { isAmbient } from "../detect/rule.js";
import { actionOf, type Decision } from "../safety/policy.js";

export type ScanRecord = {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly node: string | null;
  readonly owner: { readonly kind: string; readonly name: string } | null;
  readonly rule: string;
  /** The validator init container, its exit code and where the exit showed; null under the ambient rule. */
  readonly container: string | null;
  readonly exitCode: number | null;
  readonly where: "state" | "lastState" | null;
  readonly verdict: "broken" | "terminal";
  readonly reason: string;
  /** delete, label, report, hold or skip. */
  readonly action: string;
  readonly hold: { readonly reason: string; readonly detail: string } | null;
  readonly skip: string | null;
  /** A delete that stands in for Istio's in-place repair, and the evidence that it did not fix the pod. */
  readonly fallback: string | null;
  /** After --repair: what the API server answered (status 0: no answer), null when nothing was written. */
  readonly result: {
    readonly type: string;
    readonly result: string;
    readonly status: number | null;
    readonly detail: string | null;
  } | null;
};

type Broken = Extract<Verdict, { broken: true }>;

/** The validator's exit as detection saw it, or nulls for a rule without a validator. */
export function validatorExit(
  config: Config,
  facts: PodFacts,
  ruleName: string,
): Pick<ScanRecord, "container" | "exitCode" | "where"> {
  const rule = config.rules.find((r) => r.name === ruleName);
  if (rule === undefined || isAmbient(rule)) return { container: null, exitCode: null, where: null };
  const container = facts.initContainers.find((c) => c.name === rule.initContainer);
  const found = container && rejection(container, rule);
  return {
    container: rule.initContainer,
    exitCode: found?.t.exitCode ?? null,
    where: found ? (found.where as "state" | "lastState") : null,
  };
}

export function scanRecord(
  config: Config,
  facts: PodFacts,
  verdict: Broken,
  decision: Decision,
  outcome?: RepairOutcome,
): ScanRecord {
  return {
    namespace: facts.namespace,
    name: facts.name,
    uid: facts.uid,
    node: facts.nodeName ?? null,
    owner: facts.owner ? { kind: facts.owner.kind, name: facts.owner.name } : null,
    rule: verdict.rule,
    ...validatorExit(config, facts, verdict.rule),
    verdict: verdict.terminal ? "terminal" : "broken",
    reason: verdict.reason,
    action: outcome?.type ?? actionOf(decision),
    hold: decision.kind === "hold" ? { reason: decision.reason, detail: decision.detail } : null,
    skip: decision.kind === "skip" ? decision.reason : null,
    fallback: decision.kind === "act" && decision.fallback ? decision.fallback.detail : null,
    result: outcome
      ? {
          type: outcome.type,
          result: outcome.result,
          status: outcome.error?.status ?? null,
          detail: outcome.detail ?? null,
        }
      : null,
  };
}
