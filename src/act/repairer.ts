// The only code that changes pods: delete with preconditions, label via pods/status, or a dry-run delete.
import type { Verdict } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import { ApiError } from "../kube/api-error.js";
import { deletePod, labelPodViaStatus } from "../kube/pods-api.js";
import type { KubeTransport } from "../kube/transport.js";
import type { RepairResult, RepairType } from "../observe/metrics.js";
import type { EventRecorder } from "./event-recorder.js";

export type BrokenVerdict = Extract<Verdict, { broken: true }>;

export type RepairOutcome = {
  readonly type: RepairType;
  readonly result: RepairResult;
  /** Why a skip, fail or throttle happened, for the log. */
  readonly detail?: string;
  /** The API error behind a fail, a throttle (for Retry-After) or a skip. */
  readonly error?: ApiError;
};

export class Repairer {
  readonly #transport: KubeTransport;
  readonly #events: EventRecorder;
  readonly #label: { readonly key: string; readonly value: string };

  constructor(transport: KubeTransport, events: EventRecorder, label: { key: string; value: string }) {
    this.#transport = transport;
    this.#events = events;
    this.#label = label;
  }

  /**
   * Deletes exactly the judged pod: its UID and resourceVersion are preconditions. `fallback`: why the delete
   * stands in for Istio's in-place repair (the Event says so).
   */
  async delete(facts: PodFacts, verdict: BrokenVerdict, fallback?: string): Promise<RepairOutcome> {
    const outcome = await this.#call("delete", () =>
      deletePod(this.#transport, facts, { uid: facts.uid, resourceVersion: facts.resourceVersion }, { dryRun: false }),
    );
    if (outcome.result === "success") {
      this.#event(
        facts,
        "Normal",
        "BrokenPodDeleted",
        "Delete",
        fallback === undefined
          ? `deleted so its owner recreates it: ${describe(verdict)}`
          : `deleted as Istio's fallback so its owner recreates it (${fallback}): ${describe(verdict)}`,
      );
    }
    return outcome;
  }

  /** Labels the judged pod for a human; the resourceVersion in the patch refuses a changed pod. */
  async label(facts: PodFacts, verdict: BrokenVerdict): Promise<RepairOutcome> {
    const outcome = await this.#call("label", () =>
      labelPodViaStatus(this.#transport, facts, facts.resourceVersion, { [this.#label.key]: this.#label.value }),
    );
    if (outcome.result === "success") {
      this.#event(
        facts,
        "Warning",
        "BrokenPodLabeled",
        "Label",
        `labelled ${this.#label.key}=${this.#label.value}: ${describe(verdict)}`,
      );
    }
    return outcome;
  }

  /** Takes our label off a pod that is no longer broken; not counted as a repair. */
  async unlabel(facts: PodFacts): Promise<RepairOutcome> {
    return await this.#call("label", () =>
      labelPodViaStatus(this.#transport, facts, facts.resourceVersion, { [this.#label.key]: null }),
    );
  }

  /** Changes nothing: a server-side dry-run delete checks permissions and preconditions for real. */
  async report(facts: PodFacts, verdict: BrokenVerdict): Promise<RepairOutcome> {
    const outcome = await this.#call("report", () =>
      deletePod(this.#transport, facts, { uid: facts.uid, resourceVersion: facts.resourceVersion }, { dryRun: true }),
    );
    if (outcome.result === "success") {
      this.#event(facts, "Warning", "BrokenPodDetected", "Report", `would delete (report mode): ${describe(verdict)}`);
      return { type: "report", result: "dry_run" };
    }
    return outcome;
  }

  /**
   * A broken pod a guard holds back: one Warning Event per pod and hold reason, not one per retry. A static pod
   * is one pod across the mirrors the kubelet re-creates, so it gets one Event by name.
   */
  reportHold(facts: PodFacts, verdict: BrokenVerdict, hold: string, detail: string): void {
    this.#events.post(
      {
        pod: facts,
        type: "Warning",
        reason: "BrokenPodHeld",
        action: "Hold",
        note: `held (${hold}): ${detail}; ${describe(verdict)}`,
      },
      `BrokenPodHeld/${hold}`,
      facts.staticPod ? `static:${facts.namespace}/${facts.name}` : facts.uid,
    );
  }

  async #call(type: RepairType, call: () => Promise<void>): Promise<RepairOutcome> {
    try {
      await call();
      return { type, result: "success" };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // 404: gone already. 409: changed or replaced since it was judged. Neither is a failure: the
      // reconciler looks again at fresh facts.
      if (error.status === 404 || error.status === 409) {
        return {
          type,
          result: "skip",
          detail: error.status === 404 ? "pod is gone" : "pod changed since judged",
          error,
        };
      }
      // The server asks us to slow down: not a failure of the repair (alerts must not fire), retried later.
      if (error.throttled) return { type, result: "throttled", detail: error.message, error };
      return { type, result: "fail", detail: error.message, error };
    }
  }

  /** Queues the Event: the worker moves on to the next pod while it is written. */
  #event(facts: PodFacts, type: "Normal" | "Warning", reason: string, action: string, note: string): void {
    this.#events.post({ pod: facts, type, reason, action, note });
  }
}

const describe = (verdict: BrokenVerdict): string => `rule ${verdict.rule}: ${verdict.reason}`;
