// The CNI race on the real node beside the real Istio, and its report from the ground truth: meshed pods start
// before Istio's CNI agent has installed its plugin (their real validators fail with 126 and crash-loop), then
// cni-repair (from its chart) and Istio's agent (from Istio's chart) are installed, and the pods recover, by Istio's
// in-place repair or by a DELETE and a replacement. Who deleted what comes from the API server's audit log: the
// initiating DELETEs of cni-repair (its user agent) and of Istio's agent (its ServiceAccount), not the kubelet's
// final ones.
import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { type AuditEvent, podRequests } from "../audit-log.js";
import { waitFor } from "../wait.js";
import { isHealthy } from "../workloads.js";
import { ISTIO_VALIDATOR } from "./istio-workloads.js";
import type { RealNodeCluster } from "./real-node-cluster.js";

/** The validator's status as the kubelet reports it. */
export const validatorOf = (pod: V1Pod) => pod.status?.initContainerStatuses?.find((s) => s.name === ISTIO_VALIDATOR);

/** Broken for real: the validator exited 126 and the kubelet has restarted it at least once (a crash loop). */
export function crashLooping(pod: V1Pod): boolean {
  const status = validatorOf(pod);
  const failed = [status?.state?.terminated, status?.lastState?.terminated].some((t) => t?.exitCode === 126);
  return failed && (status?.restartCount ?? 0) >= 1;
}

/** The validator passed on its first run (exit 0, never restarted) and the pod runs. */
export function passedFirstRun(pod: V1Pod): boolean {
  const status = validatorOf(pod);
  return isHealthy(pod) && status?.state?.terminated?.exitCode === 0 && status.restartCount === 0;
}

export type Deleter = "cni-repair" | "istio";

export type PodDelete = {
  readonly by: Deleter;
  readonly name: string;
  readonly uid: string;
  readonly code: number;
  readonly atMs: number;
  readonly event: AuditEvent;
};

/** The DELETEs of pods in `namespace` sent by cni-repair or by Istio's agent (ServiceAccount istio-cni). */
export function meshDeletes(auditLogPath: string, namespace: string, istioNamespace: string): PodDelete[] {
  const istio = `system:serviceaccount:${istioNamespace}:istio-cni`;
  return podRequests(auditLogPath, namespace).flatMap((event): PodDelete[] => {
    if (event.verb !== "delete") return [];
    const by: Deleter | undefined = (event.userAgent ?? "").startsWith("cni-repair/")
      ? "cni-repair"
      : event.user?.username === istio
        ? "istio"
        : undefined;
    if (!by) return [];
    const uid = String((event.requestObject?.preconditions as { uid?: unknown } | undefined)?.uid ?? "");
    const code = event.responseStatus?.code ?? 0;
    return [{ by, name: event.objectRef?.name ?? "", uid, code, atMs: Date.parse(event.stageTimestamp), event }];
  });
}

/** Pods of the namespace, not terminating. */
export async function livePods(cluster: RealNodeCluster, namespace: string, labelSelector?: string): Promise<V1Pod[]> {
  const api = cluster.plane.kubeConfig().makeApiClient(CoreV1Api);
  const pods = await api.listNamespacedPod({ namespace, ...(labelSelector && { labelSelector }) });
  return pods.items.filter((pod) => !pod.metadata?.deletionTimestamp);
}

/** Waits until `count` pods of the namespace crash-loop on the validator; returns them. */
export async function waitCrashLooping(cluster: RealNodeCluster, namespace: string, count: number): Promise<V1Pod[]> {
  const { looping } = await waitFor(
    `${count} pods in ${namespace} crash-looping on Istio's validator`,
    async () => {
      cluster.assertRunning();
      const pods = await livePods(cluster, namespace);
      const looping = pods.filter(crashLooping);
      return looping.length === count && pods.length === count ? { looping } : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  return looping;
}

export type RaceReport = {
  readonly broken: number;
  /** Broken pods that run now, same UID: Istio's in-place repair fixed them. */
  readonly fixedByIstio: readonly string[];
  readonly deletedByCniRepair: readonly string[];
  readonly deletedByIstio: readonly string[];
  /**
   * Pods with two successful DELETEs that are not one deleter repeating itself: by both, or twice by cni-repair.
   * (Istio's controller repeats its DELETE at each status change of a pod already terminating, and the API server
   * answers each 200; those are in `istioRepeated`.)
   */
  readonly deletedTwice: readonly string[];
  /** Pods Istio's agent sent more than one successful DELETE. */
  readonly istioRepeated: readonly string[];
  readonly agentReadyToAllRunningMs: number;
};

export function raceReport(
  broken: readonly V1Pod[],
  final: readonly V1Pod[],
  deletes: readonly PodDelete[],
  agentReadyAtMs: number,
  allRunningAtMs: number,
): RaceReport {
  const brokenUids = new Set(broken.map((pod) => pod.metadata?.uid ?? ""));
  const finalUids = new Set(final.map((pod) => pod.metadata?.uid ?? ""));
  const succeeded = deletes.filter((d) => d.code >= 200 && d.code < 300);
  const count = (by: Deleter) => {
    const perUid = new Map<string, number>();
    for (const d of succeeded.filter((x) => x.by === by)) perUid.set(d.uid, (perUid.get(d.uid) ?? 0) + 1);
    return perUid;
  };
  const byUs = count("cni-repair");
  const byIstio = count("istio");
  const nameOf = (uid: string) => broken.find((pod) => pod.metadata?.uid === uid)?.metadata?.name ?? uid;
  return {
    broken: broken.length,
    fixedByIstio: [...brokenUids].filter((uid) => finalUids.has(uid)).map(nameOf),
    deletedByCniRepair: succeeded.filter((d) => d.by === "cni-repair").map((d) => d.name),
    deletedByIstio: succeeded.filter((d) => d.by === "istio").map((d) => d.name),
    deletedTwice: [...byUs].filter(([uid, times]) => times > 1 || byIstio.has(uid)).map(([uid]) => nameOf(uid)),
    istioRepeated: [...byIstio].filter(([, times]) => times > 1).map(([uid]) => nameOf(uid)),
    agentReadyToAllRunningMs: allRunningAtMs - agentReadyAtMs,
  };
}

/** One line for the test's output; `heldForIstio`: the most pods cni-repair held mesh_repair_pending at once. */
export function describeReport(name: string, report: RaceReport, heldForIstio?: number): string {
  const held = heldForIstio === undefined ? "" : ` (at most ${heldForIstio} held mesh_repair_pending at once)`;
  return (
    `      ${name}: ${report.broken} broken, ${report.fixedByIstio.length} fixed by Istio in place${held}, ` +
    `${report.deletedByCniRepair.length} deleted by cni-repair, ${report.deletedByIstio.length} deleted by Istio, ` +
    `${report.deletedTwice.length} deleted twice (${report.istioRepeated.length} DELETEd more than once by Istio itself); agent Ready -> all Running: ${report.agentReadyToAllRunningMs} ms`
  );
}
