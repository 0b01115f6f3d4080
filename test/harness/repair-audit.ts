// Judges a repair wave from the API server's audit log: which pod UIDs cni-repair sent DELETEs for, whether any
// of them was a pod that was not broken, whether any UID got more than one DELETE that took effect, and how
// long each broken pod waited for its repair. A broken pod its ReplicaSet deleted first (a scale-down) needs no repair.
import { expect } from "chai";
import { controllerDeletes, podRequests } from "./audit-log.js";
import type { BrokenPodRecord } from "./cni-simulator.js";

export type DeleteRecord = {
  readonly name: string;
  /** The UID precondition of the DELETE: the pod it was meant for. */
  readonly uid: string;
  readonly code: number;
  readonly atMs: number;
};

/** Every DELETE cni-repair sent for pods in the namespace, in the order the server logged them. */
export function deleteRecords(auditLogPath: string, namespace: string): DeleteRecord[] {
  return controllerDeletes(auditLogPath, namespace).map((event) => ({
    name: event.objectRef?.name ?? "",
    uid: String((event.requestObject?.preconditions as { uid?: unknown } | undefined)?.uid ?? ""),
    code: event.responseStatus?.code ?? 0,
    atMs: Date.parse(event.stageTimestamp),
  }));
}

export type WaveReport = {
  readonly deletes: readonly DeleteRecord[];
  /** DELETEs that took effect (200) on a UID that was never broken, or without a UID precondition. */
  readonly wrong: readonly DeleteRecord[];
  /** UIDs with more than one DELETE that took effect. */
  readonly repeated: readonly string[];
  /** Broken pods no DELETE took effect on (yet), ours or their ReplicaSet's. */
  readonly unrepaired: readonly BrokenPodRecord[];
  /**
   * Broken pods their ReplicaSet controller deleted before cni-repair did: a scale-down picks a not-Ready pod first.
   * It happens when the controller manager overshoots, e.g. a create answered by an API server killed mid-wave.
   */
  readonly removedByOwner: readonly BrokenPodRecord[];
  /** Per repaired pod, ms from `fromMs` (or from when it broke, if later) to its first successful DELETE. */
  readonly repairMs: ReadonlyMap<string, number>;
};

/** Compares the controller's DELETEs against the pods the CNI simulator broke. */
export function judgeWave(
  auditLogPath: string,
  namespace: string,
  broken: readonly BrokenPodRecord[],
  fromMs = 0,
): WaveReport {
  const deletes = deleteRecords(auditLogPath, namespace);
  const brokenByUid = new Map(broken.map((pod) => [pod.uid, pod]));
  const succeeded = deletes.filter((d) => d.code >= 200 && d.code < 300);
  const wrong = succeeded.filter((d) => d.uid === "" || !brokenByUid.has(d.uid));
  const perUid = new Map<string, number>();
  for (const d of succeeded) perUid.set(d.uid, (perUid.get(d.uid) ?? 0) + 1);
  const repairMs = new Map<string, number>();
  for (const d of succeeded) {
    const pod = brokenByUid.get(d.uid);
    if (pod && !repairMs.has(d.uid)) repairMs.set(d.uid, d.atMs - Math.max(fromMs, pod.brokenAtMs));
  }
  const scaledDown = new Set(replicaSetDeletes(auditLogPath, namespace));
  const removedByOwner = broken.filter((pod) => !repairMs.has(pod.uid) && scaledDown.has(pod.name));
  return {
    deletes,
    wrong,
    repeated: [...perUid].filter(([, count]) => count > 1).map(([uid]) => uid),
    unrepaired: broken.filter((pod) => !repairMs.has(pod.uid) && !scaledDown.has(pod.name)),
    removedByOwner,
    repairMs,
  };
}

/** Names of the pods the ReplicaSet controller deleted (it names itself in its user agent or user). */
function replicaSetDeletes(auditLogPath: string, namespace: string): string[] {
  return podRequests(auditLogPath, namespace)
    .filter((event) => event.verb === "delete" && (event.responseStatus?.code ?? 0) < 300)
    .filter(
      (event) =>
        (event.userAgent ?? "").endsWith("/replicaset-controller") ||
        (event.user?.username ?? "").endsWith(":replicaset-controller"),
    )
    .map((event) => event.objectRef?.name ?? "");
}

/** The longest wait for a repair, in ms (0 when nothing was repaired). */
export const slowestRepair = (report: WaveReport): number => Math.max(0, ...report.repairMs.values());

/** The wave's safety verdict: only broken pods deleted, each UID once, none left unrepaired. */
export function expectEachBrokenPodDeletedOnce(report: WaveReport): void {
  expect(report.wrong, "DELETEs of pods that were not broken").to.deep.equal([]);
  expect(report.repeated, "UIDs deleted twice").to.deep.equal([]);
  expect(
    report.unrepaired.map((pod) => pod.name),
    "broken pods never deleted",
  ).to.deep.equal([]);
}
