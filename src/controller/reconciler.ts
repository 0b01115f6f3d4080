// Reconcile one pod key: read the latest facts, detect, decide, act, and record the outcome.

import type { EventRecorder } from "../act/event-recorder.js";
import type { BrokenVerdict, Repairer, RepairOutcome } from "../act/repairer.js";
import type { Mode } from "../config/config.js";
import { decide } from "../decide/decide.js";
import { detect } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import type { Rule } from "../detect/rule.js";
import type { PodStore } from "../informer/pod-store.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import type { BrokenPods } from "./broken-pods.js";

/** What the worker does next with the key. */
export type ReconcileResult =
  | { readonly kind: "done" }
  /** Look again after a pause (a 409: the watch will bring fresher facts). */
  | { readonly kind: "requeue"; readonly afterMs: number }
  /** The action failed: retry with backoff, but not before the server's Retry-After. */
  | { readonly kind: "retry"; readonly notBeforeMs: number; readonly error: string };

export type ReconcilerDeps = {
  readonly store: PodStore;
  readonly rules: readonly Rule[];
  readonly mode: Mode;
  readonly label: { readonly key: string; readonly value: string };
  readonly repairer: Repairer;
  readonly events: EventRecorder;
  readonly broken: BrokenPods;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly now?: () => number;
};

/** After a 409 the facts are stale; the fresh ones arrive over the watch within moments. */
const CONFLICT_RECHECK_MS = 1_000;

export class Reconciler {
  readonly #deps: ReconcilerDeps;
  readonly #now: () => number;
  /** Pod key → UID this controller already deleted or reported, so it never acts on that UID twice. */
  readonly #handled = new Map<string, string>();

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { store, rules, broken, logger } = this.#deps;
    const facts = store.get(key);
    if (!facts) {
      this.#forget(key);
      return { kind: "done" };
    }
    const verdict = detect(facts, rules);
    if (!verdict.broken) {
      if (broken.clear(key)) logger.debug("pod no longer broken", podFields(facts));
      return { kind: "done" };
    }
    const entry = broken.markBroken(key, facts.uid, verdict.rule, this.#now());
    const decision = decide({
      facts,
      verdict,
      mode: this.#deps.mode,
      label: this.#deps.label,
      alreadyHandled: this.#handled.get(key) === facts.uid,
    });
    const fields = { ...podFields(facts), rule: verdict.rule, reason: verdict.reason };
    switch (decision.kind) {
      case "healthy":
        return { kind: "done" };
      case "hold":
        logger.info("broken pod held", { ...fields, action: "hold", hold: decision.reason });
        await this.#deps.repairer.reportTerminal(facts, verdict);
        return { kind: "done" };
      case "skip":
        this.#deps.metrics.podsRepaired.inc({ type: this.#deps.mode, result: "skip" });
        logger.info("broken pod skipped", {
          ...fields,
          action: this.#deps.mode,
          result: "skip",
          detail: decision.reason,
        });
        return { kind: "done" };
      case "act": {
        const outcome = await this.#act(decision.action, facts, verdict);
        this.#record(outcome, fields, entry.sinceMs);
        if (outcome.result === "success" || outcome.result === "dry_run") {
          if (decision.action !== "label") this.#handled.set(key, facts.uid);
          return { kind: "done" };
        }
        if (outcome.result === "skip") {
          return outcome.error?.status === 409 ? { kind: "requeue", afterMs: CONFLICT_RECHECK_MS } : { kind: "done" };
        }
        return {
          kind: "retry",
          notBeforeMs: outcome.error?.retryAfterMs ?? 0,
          error: outcome.detail ?? "action failed",
        };
      }
    }
  }

  async #act(action: Mode, facts: PodFacts, verdict: BrokenVerdict): Promise<RepairOutcome> {
    const { repairer } = this.#deps;
    switch (action) {
      case "delete":
        return await repairer.delete(facts, verdict);
      case "label":
        return await repairer.label(facts, verdict);
      case "report":
        return await repairer.report(facts, verdict);
    }
  }

  #record(outcome: RepairOutcome, fields: Record<string, unknown>, sinceMs: number): void {
    const { metrics, logger } = this.#deps;
    metrics.podsRepaired.inc({ type: outcome.type, result: outcome.result });
    const line = {
      ...fields,
      action: outcome.type,
      result: outcome.result,
      ...(outcome.detail && { detail: outcome.detail }),
    };
    if (outcome.result === "fail") {
      logger.warn("repair failed", line);
      return;
    }
    if (outcome.result === "success" || outcome.result === "dry_run") {
      metrics.repairLatencySeconds.observe(Math.max(0, this.#now() - sinceMs) / 1000);
    }
    logger.info(outcome.result === "skip" ? "repair skipped" : "repaired broken pod", line);
  }

  #forget(key: string): void {
    const entry = this.#deps.broken.clear(key);
    const handledUid = this.#handled.get(key);
    this.#handled.delete(key);
    for (const uid of new Set([entry?.uid, handledUid])) if (uid) this.#deps.events.forgetPod(uid);
  }
}

const podFields = (facts: PodFacts) => ({
  namespace: facts.namespace,
  pod: facts.name,
  uid: facts.uid,
  node: facts.nodeName,
});
