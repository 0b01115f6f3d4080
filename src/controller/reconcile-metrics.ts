// One reconcile's outcome and duration, in controller-runtime's terms and in our own histogram.
import type { Metrics } from "../observe/metrics.js";
import type { ReconcileResult } from "./reconciler.js";

/**
 * controller-runtime's result label: an error (retried with backoff) is "error"; a look-again after a pause is
 * "requeue_after" ("requeue" when the pause is zero); everything else "success".
 */
export function reconcileResultLabel(result: ReconcileResult): "success" | "error" | "requeue" | "requeue_after" {
  switch (result.kind) {
    case "done":
      return "success";
    case "retry":
      return "error";
    case "requeue":
      return result.afterMs > 0 ? "requeue_after" : "requeue";
  }
}

export function recordReconcile(metrics: Metrics, result: ReconcileResult, seconds: number): void {
  const label = reconcileResultLabel(result);
  metrics.reconcileDurationSeconds.observe(seconds);
  metrics.controllerRuntime.reconcileTotal.inc({ controller: metrics.controllerRuntime.name, result: label });
  metrics.controllerRuntime.reconcileTimeSeconds.observe({ controller: metrics.controllerRuntime.name }, seconds);
  if (label === "error") metrics.controllerRuntime.reconcileErrors.inc({ controller: metrics.controllerRuntime.name });
}
