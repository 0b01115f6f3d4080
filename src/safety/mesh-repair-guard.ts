// Istio's in-place repair and ours, side by side: while Istio can still fix a broken pod in place, the istio rule
// holds it; it deletes (as Istio's fallback) only on evidence that Istio's repair did not work for this pod. When
// Istio deletes or labels broken pods itself, the istio rule leaves them to it. Pure: one decision, moved as a unit.
import type { PodFacts, Termination } from "../detect/facts.js";
import {
  describeIstioRepair,
  type FallbackBasis,
  type IstioRepairState,
  istioRepairMode,
} from "../detect/istio-repair-settings.js";

/**
 * Beyond --cni-agent-min-ready, how long after its CNI agent turned Ready a node's failures may still predate
 * Istio's repair. Istio's repair controller runs in that agent and fixes a pod's network namespace within moments
 * of seeing its validator fail, but a validator run already under way (it waits for its probe) can still end in a
 * failure after that: only a failure finishing later than this says the repair did not work.
 */
export const ISTIO_REPAIR_GRACE_MS = 10_000;

export type MeshRepairInput = {
  readonly istio: IstioRepairState;
  readonly facts: PodFacts;
  /** The validator init container (the istio rule's). */
  readonly validator: string;
  /** When the node's CNI agent turned Ready, by the kubelet's clock (the same clock as finishedAt); undefined: none. */
  readonly agentReadySinceMs: number | undefined;
  readonly minReadyMs: number;
  readonly nowMs: number;
};

export type MeshRepairCheck =
  /** Leave the pod to Istio: it can still repair it (pending), or it acts on broken pods itself (active). */
  | {
      readonly kind: "hold";
      readonly reason: "mesh_repair_pending" | "mesh_repair_active";
      readonly detail: string;
      /** Look again then (a timestamp in the future comes due); otherwise a new failure or setting wakes it. */
      readonly waitMs?: number;
    }
  /** Istio repairs in place but evidently not this pod: deleting is the fallback. `detail` says why. */
  | { readonly kind: "fallback"; readonly basis: FallbackBasis; readonly detail: string };

const at = (ms: number): string => new Date(ms).toISOString();

/** What Istio's repair means for deleting this broken pod now; undefined when Istio does not repair (or is ignored). */
export function meshRepairCheck(input: MeshRepairInput): MeshRepairCheck | undefined {
  const { istio, facts, nowMs } = input;
  const mode = istioRepairMode(istio);
  if (mode === "off") return undefined;
  const pending = (why: string, waitMs?: number): MeshRepairCheck => ({
    kind: "hold",
    reason: "mesh_repair_pending",
    detail: `Istio may still repair it in place: ${why} (Istio's repair: ${describeIstioRepair(istio)})`,
    ...(waitMs !== undefined && { waitMs }),
  });
  if (mode === "delete" || mode === "label") {
    return {
      kind: "hold",
      reason: "mesh_repair_active",
      detail: `Istio ${mode === "delete" ? "deletes" : "labels"} broken pods itself (${describeIstioRepair(istio)}); --istio-repair=ignore to act on them too`,
    };
  }
  // The kubelet never re-runs the validator of a restartPolicy Never pod: an in-place repair cannot make it pass.
  if (facts.restartPolicy === "Never") {
    return {
      kind: "fallback",
      basis: "never_restarts",
      detail: "restartPolicy Never: the validator never runs again, so Istio's in-place repair cannot fix it",
    };
  }
  const container = facts.initContainers.find((c) => c.name === input.validator);
  if (container?.state === "running") return pending("the validator is running again; waiting for its result");
  // The newest failure, and whether it is a repeat: the kubelet's restartCount is the newest run's attempt number.
  const latest: Termination | undefined =
    container === undefined
      ? undefined
      : typeof container.state === "string"
        ? container.lastTermination
        : container.state;
  const finishedAtMs = latest?.finishedAtMs;
  if (container === undefined || finishedAtMs === undefined) {
    return pending("the validator's last failure has no finish time to judge by");
  }
  // Fail-safe: a finish time ahead of our clock cannot be ordered against the agent's Ready time yet.
  if (finishedAtMs > nowMs) {
    return pending(`the validator's last failure finished at ${at(finishedAtMs)}, in the future`, finishedAtMs - nowMs);
  }
  const readySince = input.agentReadySinceMs;
  if (readySince === undefined || !Number.isFinite(readySince) || readySince > nowMs) {
    return pending("no Ready time of the node's CNI agent to judge its last failure by");
  }
  const repairedBy = readySince + input.minReadyMs + ISTIO_REPAIR_GRACE_MS;
  const agent = `the CNI agent Ready since ${at(readySince)}`;
  if (finishedAtMs <= repairedBy) {
    return pending(
      `the validator last failed at ${at(finishedAtMs)}, before ${agent} had been Ready for ` +
        `${Math.round((input.minReadyMs + ISTIO_REPAIR_GRACE_MS) / 1000)} s; waiting for its next run`,
    );
  }
  if (container.restartCount < 1) {
    return pending(`the validator has failed once (at ${at(finishedAtMs)}, ${agent}); waiting for its next run`);
  }
  return {
    kind: "fallback",
    basis: "failed_again",
    detail: `Istio's in-place repair did not fix it: the validator failed again at ${at(finishedAtMs)}, ${agent}`,
  };
}
