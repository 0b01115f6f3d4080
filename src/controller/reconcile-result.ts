// What a reconcile tells its controller to do next with the key, and how controller-runtime's metrics name it.
import type { ReconcileResultLabel } from "../observe/standard-metrics.js";

export type ReconcileResult =
  | { readonly kind: "done" }
  /**
   * Look again after a pause (a 409: fresher facts are on their way; or a hold that lifts with time).
   * `keepFailures`: the pause is no fresh start (a failing delete waiting for its next turn in the pace keeps
   * counting towards --max-retries, or it would spend a token every turn forever).
   */
  | { readonly kind: "requeue"; readonly afterMs: number; readonly keepFailures?: boolean }
  /** The action failed: retry with backoff, but not before the server's Retry-After. */
  | { readonly kind: "retry"; readonly notBeforeMs: number; readonly error: string };

/**
 * controller-runtime's result label: an error (retried with backoff) is "error"; a look-again after a pause is
 * "requeue_after" ("requeue" when the pause is zero); everything else "success".
 */
export function reconcileResultLabel(result: ReconcileResult): ReconcileResultLabel {
  switch (result.kind) {
    case "done":
      return "success";
    case "retry":
      return "error";
    case "requeue":
      return result.afterMs > 0 ? "requeue_after" : "requeue";
  }
}
