// Reconcile one pod key: read the latest facts, detect, decide under the guards, act, and record the outcome.
import type { EventRecorder } from "../act/event-recorder.js";
import type { BrokenVerdict, Repairer, RepairOutcome } from "../act/repairer.js";
import { ThrottleGate } from "../act/throttle-gate.js";
import type { Mode } from "../config/config.js";
import { describeGraceStart } from "../detect/ambient.js";
import { type DetectContext, detect, type GraceStart } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import type { Rule } from "../detect/rule.js";
import type { PodStore } from "../informer/pod-store.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import type { SafetyGuards } from "../safety/guards.js";
import type { Holds } from "../safety/holds.js";
import { type Decision, decide, isPaced, type MeshFallback, modeFor } from "../safety/policy.js";
import type { BrokenPods } from "./broken-pods.js";
import type { ReconcileResult } from "./reconcile-result.js";

export type ReconcilerDeps = {
  readonly store: PodStore;
  readonly rules: readonly Rule[];
  readonly mode: Mode;
  readonly label: { readonly key: string; readonly value: string };
  readonly deleteBarePods: boolean;
  readonly repairer: Repairer;
  readonly events: EventRecorder;
  readonly broken: BrokenPods;
  readonly guards: SafetyGuards;
  readonly holds: Holds;
  /** The clock and namespace labels detection needs now. */
  readonly context: () => DetectContext;
  readonly metrics: Metrics;
  readonly logger: Logger;
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
  /** Pod key → UID this controller already deleted or reported, so it never acts on that UID twice. */
  readonly #handled = new Map<string, string>();
  /** Pods whose last action the API server throttled: no new call before its Retry-After. */
  readonly #throttled: ThrottleGate;

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#throttled = new ThrottleGate(this.#now);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { store, rules, broken, logger } = this.#deps;
    const facts = store.get(key);
    if (!facts) {
      this.#forget(key);
      return { kind: "done" };
    }
    const verdict = detect(facts, rules, this.#deps.context());
    if (!verdict.broken) {
      this.#release(key);
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
    const mode = modeFor(this.#deps.mode, this.#deps.rules, verdict.rule);
    const guards =
      mode === "label" ? {} : this.#deps.guards.view(facts, verdict.rule, { seenBrokenSinceMs: entry.sinceMs });
    const decision = decide({
      facts,
      verdict,
      mode,
      label: this.#deps.label,
      alreadyHandled: this.#handled.get(key) === facts.uid,
      deleteBarePods: this.#deps.deleteBarePods,
      guards,
    });
    // A watch event or resync may bring the pod back before the server's Retry-After has passed: spend nothing.
    const throttledMs = decision.kind === "act" ? this.#throttled.waitMs(key) : 0;
    if (throttledMs > 0) return { kind: "requeue", afterMs: throttledMs };
    // Same tick as the view (no await between): the turn peeked at is the turn spent or reserved.
    if (isPaced(decision)) this.#deps.guards.commitPace(key, guards);
    const fields = {
      ...podFields(facts),
      rule: verdict.rule,
      reason: verdict.reason,
      ...graceFields(verdict.graceStart),
    };
    switch (decision.kind) {
      case "healthy":
        return { kind: "done" };
      case "hold":
        return await this.#hold(key, facts, verdict, decision, fields);
      case "skip":
        this.#release(key);
        this.#deps.metrics.podsRepaired.inc({ type: mode, result: "skip" });
        logger.info("broken pod skipped", {
          ...fields,
          action: mode,
          result: "skip",
          detail: decision.reason,
        });
        return { kind: "done" };
      case "act": {
        this.#release(key);
        const outcome = await this.#act(decision.action, facts, verdict, decision.fallback);
        this.#record(outcome, fields, entry.sinceMs);
        this.#deps.onOutcome?.(facts, verdict, decision, outcome);
        if (outcome.result === "success" || outcome.result === "dry_run") {
          if (decision.action !== "label") this.#handled.set(key, facts.uid);
          return { kind: "done" };
        }
        if (outcome.result === "skip") {
          return outcome.error?.status === 409 ? { kind: "requeue", afterMs: CONFLICT_RECHECK_MS } : { kind: "done" };
        }
        const retryAfterMs = outcome.error?.retryAfterMs;
        if (outcome.result === "throttled" && retryAfterMs !== undefined) {
          // Not a failure: no retry budget is spent, and nothing calls for this pod before the server asked.
          this.#throttled.hold(key, retryAfterMs);
          return { kind: "requeue", afterMs: retryAfterMs };
        }
        return {
          kind: "retry",
          notBeforeMs: retryAfterMs ?? 0,
          error: outcome.detail ?? "action failed",
        };
      }
    }
  }

  async #hold(
    key: string,
    facts: PodFacts,
    verdict: BrokenVerdict,
    decision: Extract<Decision, { kind: "hold" }>,
    fields: Record<string, unknown>,
  ): Promise<ReconcileResult> {
    const { holds, logger } = this.#deps;
    const line = { ...fields, action: "hold", hold: decision.reason, detail: decision.detail };
    if (decision.reason !== "rate_limit") this.#deps.guards.forgetPod(key);
    if (holds.hold(key, facts, decision.reason)) {
      logger.info("broken pod held", line);
      this.#deps.repairer.reportHold(facts, verdict, decision.reason, decision.detail);
    } else {
      logger.debug("broken pod still held", line);
    }
    if (decision.label) {
      const outcome = await this.#deps.repairer.label(facts, verdict);
      this.#record(outcome, fields, undefined);
      this.#deps.onOutcome?.(facts, verdict, decision, outcome);
    }
    if (decision.retryAfterMs === undefined) return { kind: "done" };
    return { kind: "requeue", afterMs: decision.retryAfterMs, keepFailures: decision.reason === "rate_limit" };
  }

  async #act(action: Mode, facts: PodFacts, verdict: BrokenVerdict, fallback?: MeshFallback): Promise<RepairOutcome> {
    const { repairer, guards } = this.#deps;
    switch (action) {
      case "delete": {
        guards.beforeDelete(facts);
        const outcome = await repairer.delete(facts, verdict, fallback?.detail);
        if (fallback && outcome.result === "success")
          this.#deps.metrics.meshFallbackDeletions.inc({ basis: fallback.basis });
        // A 429/503 refused the DELETE before doing anything: like a skip, nothing was deleted.
        const refused = outcome.result === "skip" || outcome.result === "throttled";
        guards.afterDelete(facts, outcome.result === "success" ? "deleted" : refused ? "skipped" : "failed");
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

  /** The pod is no longer held (acted on, healed, or gone) and waits for no deletion slot. */
  #release(key: string): void {
    this.#deps.holds.release(key);
    this.#deps.guards.forgetPod(key);
  }

  #forget(key: string): void {
    this.#release(key);
    this.#throttled.forget(key);
    const entry = this.#deps.broken.clear(key);
    const handledUid = this.#handled.get(key);
    this.#handled.delete(key);
    for (const uid of new Set([entry?.uid, handledUid])) if (uid) this.#deps.events.forgetPod(uid);
  }
}

/** When an ambient pod's enrolment grace started, and why (`explain` shows the same). */
const graceFields = (start: GraceStart | undefined) => (start ? { graceStarted: describeGraceStart(start) } : {});

const podFields = (facts: PodFacts) => ({
  namespace: facts.namespace,
  pod: facts.name,
  uid: facts.uid,
  node: facts.nodeName,
});
