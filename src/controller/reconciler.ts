// Reconcile one pod key: read the latest facts, detect, ask the safety object (judge), act, and settle the outcome.
import type { EventRecorder } from "../act/event-recorder.js";
import type { BrokenVerdict, Repairer, RepairOutcome } from "../act/repairer.js";
import type { Mode } from "../config/config.js";
import { describeGraceStart } from "../detect/ambient.js";
import { type DetectContext, detect, type GraceStart } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import type { Rule } from "../detect/rule.js";
import type { PodStore } from "../informer/pod-store.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import type { Decision, MeshFallback } from "../safety/policy.js";
import type { Safety } from "../safety/safety.js";
import type { Advice } from "../safety/ticket.js";
import type { BrokenPods } from "./broken-pods.js";
import type { ReconcileResult } from "./reconcile-result.js";

export type ReconcilerDeps = {
  readonly store: PodStore;
  readonly rules: readonly Rule[];
  /** Our label: taken off a pod that recovered. */
  readonly label: { readonly key: string; readonly value: string };
  readonly repairer: Repairer;
  readonly events: EventRecorder;
  readonly broken: BrokenPods;
  readonly safety: Safety;
  /** The clock and namespace labels detection needs now. */
  readonly context: () => DetectContext;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** The monotonic clock: when a pod was first seen broken, and how long its repair took. */
  readonly now?: () => number;
  /** Each write's outcome with the decision behind it (scan --repair reports these). */
  readonly onOutcome?: (facts: PodFacts, verdict: BrokenVerdict, decision: Decision, outcome: RepairOutcome) => void;
};

/** What the log line says happened; report mode sends a dry-run delete, so it would have deleted. */
const OUTCOME_MESSAGES = {
  success: "repaired broken pod",
  dry_run: "would delete broken pod",
  skip: "repair skipped",
} as const;

/** After a 409 the facts are stale; the fresh ones arrive over the watch within moments. */
const CONFLICT_RECHECK_MS = 1_000;

export class Reconciler {
  readonly #deps: ReconcilerDeps;
  readonly #now: () => number;

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => performance.now());
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { store, rules, broken, logger, safety } = this.#deps;
    const facts = store.get(key);
    if (!facts) {
      // The safety forgot the pod when it left the cache (Safety.observe); what is left is ours.
      const entry = broken.clear(key);
      if (entry) this.#deps.events.forgetPod(entry.uid);
      return { kind: "done" };
    }
    const verdict = detect(facts, rules, this.#deps.context());
    if (!verdict.broken) {
      safety.judge(facts, verdict).ticket.release();
      if (broken.clear(key)) logger.debug("pod no longer broken", podFields(facts));
      // Our label means "broken now": take it off a pod that recovered, so it does not mislead anyone.
      if (!facts.deleting && facts.labels[this.#deps.label.key] === this.#deps.label.value) {
        const outcome = await this.#deps.repairer.unlabel(facts);
        if (outcome.result === "fail")
          logger.warn("could not remove the label from a recovered pod", {
            ...podFields(facts),
            detail: outcome.detail,
          });
        else if (outcome.result === "success") logger.info("removed the label from a recovered pod", podFields(facts));
      }
      if (verdict.recheckAfterMs === undefined) return { kind: "done" };
      logger.debug("not enrolled yet, within the grace", {
        ...podFields(facts),
        ...graceFields(verdict.graceStart),
        recheckAfterMs: verdict.recheckAfterMs,
      });
      return { kind: "requeue", afterMs: verdict.recheckAfterMs };
    }
    const entry = broken.markBroken(key, facts.uid, verdict.rule, this.#now());
    // Same tick as the guards' view (no await before it): what the decision needs is reserved here.
    const judgement = safety.judge(facts, verdict, { seenBrokenSinceMs: entry.sinceMs });
    const { decision, ticket } = judgement;
    const mode = judgement.mode as Mode;
    const fields = {
      ...podFields(facts),
      rule: verdict.rule,
      reason: verdict.reason,
      ...graceFields(verdict.graceStart),
    };
    switch (decision.kind) {
      case "healthy":
        ticket.release();
        return { kind: "done" };
      case "hold": {
        const line = { ...fields, action: "hold", hold: decision.reason, detail: decision.detail };
        if (judgement.heldAnew) {
          logger.info("broken pod held", line);
          if (!decision.quiet) this.#deps.repairer.reportHold(facts, verdict, decision.reason, decision.detail);
        } else {
          logger.debug("broken pod still held", line);
        }
        const advice = ticket.release();
        if (decision.label) {
          const outcome = await this.#deps.repairer.label(facts, verdict);
          this.#record(outcome, fields, undefined);
          this.#deps.onOutcome?.(facts, verdict, decision, outcome);
        }
        return requeueAfter(advice);
      }
      case "skip":
        ticket.release();
        this.#deps.metrics.podsRepaired.inc({ type: mode, result: "skip" });
        logger.info("broken pod skipped", {
          ...fields,
          action: mode,
          result: "skip",
          detail: decision.reason,
        });
        return { kind: "done" };
      case "act": {
        let outcome: RepairOutcome;
        try {
          outcome = await this.#act(decision.action, facts, verdict, decision.fallback);
        } catch (error) {
          // Nothing was sent (or nothing is known of it): give back what the judgement reserved.
          if (ticket.open) ticket.release();
          throw error;
        }
        const advice = ticket.settle({
          result: outcome.result,
          ...(outcome.error?.retryAfterMs !== undefined && { retryAfterMs: outcome.error.retryAfterMs }),
        });
        this.#record(outcome, fields, entry.sinceMs);
        this.#deps.onOutcome?.(facts, verdict, decision, outcome);
        if (outcome.result === "success" || outcome.result === "dry_run") return { kind: "done" };
        if (outcome.result === "skip") {
          return outcome.error?.status === 409 ? { kind: "requeue", afterMs: CONFLICT_RECHECK_MS } : { kind: "done" };
        }
        // Throttled: not a failure; no retry budget is spent, and nothing calls for this pod before the server asked.
        if (advice.requeueAfterMs !== undefined) return requeueAfter(advice);
        return {
          kind: "retry",
          notBeforeMs: outcome.error?.retryAfterMs ?? 0,
          error: outcome.detail ?? "action failed",
        };
      }
    }
  }

  async #act(action: Mode, facts: PodFacts, verdict: BrokenVerdict, fallback?: MeshFallback): Promise<RepairOutcome> {
    const { repairer } = this.#deps;
    switch (action) {
      case "delete": {
        const outcome = await repairer.delete(facts, verdict, fallback?.detail);
        if (fallback && outcome.result === "success")
          this.#deps.metrics.meshFallbackDeletions.inc({ basis: fallback.basis });
        return outcome;
      }
      case "label":
        return await repairer.label(facts, verdict);
      case "report":
        return await repairer.report(facts, verdict);
    }
  }

  #record(outcome: RepairOutcome, fields: Record<string, unknown>, sinceMs: number | undefined): void {
    const { metrics, logger } = this.#deps;
    metrics.podsRepaired.inc({ type: outcome.type, result: outcome.result });
    const line = {
      ...fields,
      action: outcome.type,
      result: outcome.result,
      ...(outcome.detail && { detail: outcome.detail }),
    };
    if (outcome.result === "fail" || outcome.result === "throttled") {
      logger.warn(outcome.result === "fail" ? "repair failed" : "repair throttled by the API server", {
        ...line,
        ...(outcome.error?.retryAfterMs !== undefined && { retryAfterMs: outcome.error.retryAfterMs }),
      });
      return;
    }
    if (sinceMs !== undefined && (outcome.result === "success" || outcome.result === "dry_run")) {
      metrics.repairLatencySeconds.observe(Math.max(0, this.#now() - sinceMs) / 1000);
    }
    logger.info(OUTCOME_MESSAGES[outcome.result], line);
  }
}

/** A hold's wait, or the server's Retry-After, as the controller's result. */
const requeueAfter = (advice: Advice): ReconcileResult =>
  advice.requeueAfterMs === undefined
    ? { kind: "done" }
    : {
        kind: "requeue",
        afterMs: advice.requeueAfterMs,
        ...(advice.keepFailures !== undefined && { keepFailures: advice.keepFailures }),
      };

/** When an ambient pod's enrolment grace started, and why (`explain` shows the same). */
const graceFields = (start: GraceStart | undefined) => (start ? { graceStarted: describeGraceStart(start) } : {});

const podFields = (facts: PodFacts) => ({
  namespace: facts.namespace,
  pod: facts.name,
  uid: facts.uid,
  node: facts.nodeName,
});
