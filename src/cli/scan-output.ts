// What `scan` prints: the scope it looked in, the counts, and the per-pod records as a table or one JSON object.
import type { Config, OutputFormat } from "../config/config.js";
import { describeFieldSelector } from "../config/selectors.js";
import type { NodeTaintView } from "../prevent/taint-judge.js";
import type { ScanRecord } from "./scan-record.js";
import { renderStructured } from "./structured-output.js";
import { formatTable } from "./table.js";

export type ScanScope = {
  /** Empty: every namespace. */
  readonly namespaces: readonly string[];
  readonly excludeNamespaces: readonly string[];
  readonly labelSelector: string;
  readonly fieldSelector: string;
};

export type ScanCounts = {
  /** Pods listed in the scope (the cache after the first list). */
  readonly checked: number;
  readonly broken: number;
  /** Broken pods by what run does (or, after --repair, did) with them: delete, label, report, hold, skip. */
  readonly byAction: Readonly<Record<string, number>>;
};

export type ScanReport = {
  readonly scope: ScanScope;
  readonly counts: ScanCounts;
  readonly pods: readonly ScanRecord[];
  /** With --startup-taint: the nodes carrying a managed taint (or about to get one), and why it is still there. */
  readonly startupTaints?: readonly StartupTaintRecord[];
  /** Istio's own repair as read from its settings (the istio rule defers to it); absent when not read or not there. */
  readonly istioRepair?: string;
};

export type StartupTaintRecord = {
  readonly node: string;
  /** The managed keys the node carries. */
  readonly taints: readonly string[];
  /** What run would do now: remove, add, hold (kept, or not added), none. */
  readonly action: string;
  readonly reason: string | null;
  readonly detail: string | null;
};

export function startupTaintRecord(view: NodeTaintView): StartupTaintRecord {
  const { decision } = view;
  return {
    node: view.node,
    taints: view.present,
    action: decision.kind,
    reason: decision.kind === "hold" ? decision.reason : null,
    detail: decision.kind === "none" ? null : decision.detail,
  };
}

export function scanScope(config: Config): ScanScope {
  return {
    namespaces: config.namespaces,
    excludeNamespaces: config.excludeNamespaces,
    labelSelector: config.scope.labelSelector ?? "",
    fieldSelector: describeFieldSelector(config.scope),
  };
}

export function scanCounts(checked: number, pods: readonly ScanRecord[]): ScanCounts {
  const byAction: Record<string, number> = {};
  for (const pod of pods) byAction[pod.action] = (byAction[pod.action] ?? 0) + 1;
  return { checked, broken: pods.length, byAction };
}

/** "namespace foo, field selector metadata.namespace=foo": enough to tell a wrong scope from a healthy one. */
export function describeScope(scope: ScanScope): string {
  const parts = [
    scope.namespaces.length === 0
      ? "all namespaces"
      : `${scope.namespaces.length === 1 ? "namespace" : "namespaces"} ${scope.namespaces.join(", ")}`,
  ];
  if (scope.excludeNamespaces.length > 0) parts.push(`excluding ${scope.excludeNamespaces.join(", ")}`);
  if (scope.labelSelector !== "") parts.push(`label selector ${scope.labelSelector}`);
  if (scope.fieldSelector !== "") parts.push(`field selector ${scope.fieldSelector}`);
  return parts.join(", ");
}

export function renderScan(report: ScanReport, output: OutputFormat): string {
  if (output !== "table") return renderStructured(report, output);
  const istio = report.istioRepair === undefined ? "" : `Istio's repair: ${report.istioRepair}.\n`;
  return `${istio}${renderPods(report)}${report.startupTaints ? renderStartupTaints(report.startupTaints) : ""}`;
}

/** "2 nodes carry a startup taint." and, per node, the taints and why they are (still) there. */
function renderStartupTaints(records: readonly StartupTaintRecord[]): string {
  const carrying = records.filter((record) => record.taints.length > 0).length;
  const summary = `${carrying} ${carrying === 1 ? "node carries" : "nodes carry"} a startup taint.\n`;
  if (records.length === 0) return summary;
  const table = formatTable(
    ["NODE", "STARTUP TAINTS", "ACTION"],
    records.map((record) => [
      record.node,
      record.taints.join(",") || "-",
      record.reason ? `${record.action}: ${record.reason} (${record.detail})` : `${record.action} (${record.detail})`,
    ]),
  );
  return `${table}${summary}`;
}

function renderPods(report: ScanReport): string {
  const { checked, broken } = report.counts;
  const summary = `${checked} ${checked === 1 ? "pod" : "pods"} checked (${describeScope(report.scope)}), ${broken} broken.\n`;
  if (report.pods.length === 0) return summary;
  const repaired = report.pods.some((pod) => pod.result !== null);
  const table = formatTable(
    ["NAMESPACE", "POD", "NODE", "RULE", "REASON", repaired ? "RESULT" : "ACTION"],
    report.pods.map((pod) => [pod.namespace, pod.name, pod.node ?? "", pod.rule, pod.reason, actionText(pod)]),
  );
  return `${table}${summary}`;
}

/** "delete", "hold: bare_pod (…)", "label (held from delete: bare_pod …)", "delete fail 403 (…)". */
function actionText(pod: ScanRecord): string {
  const why = pod.hold ? `${pod.hold.reason}: ${pod.hold.detail}` : pod.skip;
  if (pod.result !== null) {
    const status = pod.result.status === null ? "" : ` ${pod.result.status}`;
    const detail = pod.result.detail ?? why;
    return `${pod.result.type} ${pod.result.result}${status}${detail ? ` (${detail})` : ""}`;
  }
  if (pod.action === "hold") return `hold: ${pod.hold?.reason} (${pod.hold?.detail})`;
  if (pod.action === "skip") return `skip (${pod.skip})`;
  if (pod.fallback !== null) return `${pod.action} (Istio's fallback: ${pod.fallback})`;
  return pod.hold ? `${pod.action} (held from delete: ${why})` : pod.action;
}
