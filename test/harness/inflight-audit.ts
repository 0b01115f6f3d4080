// How many pods cni-repair had deleted that were still terminating, at the worst moment, from the audit log alone:
// a pod is in flight from cni-repair's DELETE (the server's answer) until the DELETE that removed it (the fake
// kubelet's, grace 0). The controller holds a slot from before its DELETE until it sees the pod gone, a wider
// interval, so these peaks never exceed what it counted: a peak above a cap is a cap the controller broke.
import { auditMicros, podRequests } from "./audit-log.js";

/** The peak number of pods in flight per group (e.g. node, by pod name) and over the whole namespace. */
export function inflightPeaks(
  auditLogPath: string,
  namespace: string,
  groupOf: (podName: string) => string,
): { readonly total: number; readonly byGroup: ReadonlyMap<string, number> } {
  const changes: { atUs: number; name: string; delta: 1 | -1 }[] = [];
  const deletedByUs = new Set<string>();
  for (const event of podRequests(auditLogPath, namespace)) {
    if (event.verb !== "delete" || event.objectRef?.subresource || event.responseStatus?.code !== 200) continue;
    const name = event.objectRef?.name ?? "";
    const ours = (event.userAgent ?? "").startsWith("cni-repair/");
    if (ours && !deletedByUs.has(name)) {
      deletedByUs.add(name);
      changes.push({ atUs: auditMicros(event.stageTimestamp), name, delta: 1 });
    } else if (!ours && deletedByUs.has(name)) {
      deletedByUs.delete(name);
      changes.push({ atUs: auditMicros(event.stageTimestamp), name, delta: -1 });
    }
  }
  // At the same microsecond a removal comes first: the controller frees a slot only after it happened.
  changes.sort((a, b) => a.atUs - b.atUs || a.delta - b.delta);
  const now = new Map<string, number>();
  const byGroup = new Map<string, number>();
  let current = 0;
  let total = 0;
  for (const { name, delta } of changes) {
    const group = groupOf(name);
    const inGroup = (now.get(group) ?? 0) + delta;
    now.set(group, inGroup);
    byGroup.set(group, Math.max(byGroup.get(group) ?? 0, inGroup));
    current += delta;
    total = Math.max(total, current);
  }
  return { total, byGroup };
}
