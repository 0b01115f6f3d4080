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
 * Beyond --cni-agent-min-ready, how long after its CNI agent turned Ready Istio may still be getting to a pod: its
 * repair controller runs in that agent and fixes a pod's network namespace within moments of seeing the pod's
 * validator failure, and the kubelet's times have whole seconds. A validator run that started later than this began
 * with Istio's fix in place, if there was one.
 */
export const ISTIO_REPAIR_GRACE_MS = 10_000;

/**
 * The run (the kubelet's restartCount, 0 for the first) from which a failure is evidence. Istio's repair acts on a
 * pod when it sees the validator's lastState exit with the validator's code, once per pod UID; the kubelet writes
 * that lastState only when it starts run 1 (run 0's failure stays in `state` until then). So run 1 is already under
 * way when Istio first gets its chance, and its failure says nothing: run 2 is the first that can start after it.
 */
export const FIRST_RUN_AFTER_ISTIO_CHANCE = 2;

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
  // The newest failure: in `state` until the kubelet restarts it, then in lastState; restartCount is its run number.
  const latest: Termination | undefined =
    container === undefined
      ? undefined
      : typeof container.state === "string"
        ? container.lastTermination
        : container.state;
  const run = container?.restartCount ?? 0;
  if (latest === undefined) return pending("the validator has no failure on record to judge by");
  if (run < FIRST_RUN_AFTER_ISTIO_CHANCE) {
    return pending(
      `the validator's failed run ${run} began before Istio could see any failure of it (Istio acts on the first ` +
        `failure shown as lastState, from run 1 on); waiting for a run that starts after that`,
    );
  }
  const startedAtMs = latest.startedAtMs;
  if (startedAtMs === undefined) return pending("the validator's last failed run has no start time to judge by");
  // Fail-safe: a start time ahead of our clock cannot be ordered against the agent's Ready time yet.
  if (startedAtMs > nowMs) {
    return pending(`the validator's last failed run started at ${at(startedAtMs)}, in the future`, startedAtMs - nowMs);
  }
  const readySince = input.agentReadySinceMs;
  if (readySince === undefined || !Number.isFinite(readySince) || readySince > nowMs) {
    return pending("no Ready time of the node's CNI agent to judge its last failure by");
  }
  const chanceBy = readySince + input.minReadyMs + ISTIO_REPAIR_GRACE_MS;
  const agent = `the CNI agent Ready since ${at(readySince)}`;
  if (startedAtMs < chanceBy) {
    return pending(
      `the validator's failed run ${run} started at ${at(startedAtMs)}, before ${agent} had been Ready for ` +
        `${Math.round((input.minReadyMs + ISTIO_REPAIR_GRACE_MS) / 1000)} s; waiting for a run that starts after Istio's repair had its chance`,
    );
  }
  return {
    kind: "fallback",
    basis: "failed_again",
    detail:
      `Istio's in-place repair did not fix it: the validator's run ${run}, started at ${at(startedAtMs)} after ` +
      `Istio had seen an earlier failure (${agent}), failed too`,
  };
}
