// The side-by-side tables (issue 27): node-scoped runs and the agent-outage recovery, each figure as a ratio to
// Istio's repair controller when it ran (else to cni-repair).
import type { ControllerKind } from "../lib/controllers.js";
import type { OutageRun } from "../scenarios/agent-outage.js";
import type { SideRun } from "../scenarios/side-by-side.js";
import { type RoundRow, roundsTable } from "./rounds-table.js";

const MB = 1024 * 1024;

const SIDE_ROWS: readonly RoundRow<SideRun>[] = [
  { label: "start-up: spawn → DELETE of a pod broken before it started (ms)", value: (r) => r.startupMs, digits: 0 },
  { label: "spawn → synced / ready (ms)", value: (r) => r.readyMs, digits: 0 },
  { label: "isolated repair latency p50 (ms)", value: (r) => r.isolated?.p50, digits: 2 },
  { label: "isolated repair latency p99 (ms)", value: (r) => r.isolated?.p99, digits: 2 },
  { label: "CPU per watch event (µs)", value: (r) => r.cpuUsPerEvent, digits: 0 },
  { label: "idle CPU after sync (ms per s)", value: (r) => r.idleCpuMsPerSecond, digits: 2 },
  { label: "RSS after sync (MB)", value: (r) => (r.rssAfterSync ?? Number.NaN) / MB, digits: 1 },
  { label: "RSS after churn and repairs (MB)", value: (r) => (r.rssAfterBurst ?? Number.NaN) / MB, digits: 1 },
  { label: "burst latency p50 (ms)", value: (r) => r.burst?.p50, digits: 1 },
  { label: "burst latency p99 (ms)", value: (r) => r.burst?.p99, digits: 1 },
  { label: "DELETE requests per repaired pod", value: (r) => r.deletesPerRepairedPod, digits: 2 },
];

const OUTAGE_ROWS: readonly RoundRow<OutageRun>[] = [
  { label: "agent back → last broken pod deleted (s)", value: (r) => (r.recoveryMs ?? Number.NaN) / 1000, digits: 2 },
  {
    label: "pods per second (agent back → last)",
    value: (r) => (r.deleted ?? Number.NaN) / ((r.recoveryMs ?? Number.NaN) / 1000),
    digits: 2,
  },
  { label: "agent back → first DELETE (s)", value: (r) => (r.firstDeleteMs ?? Number.NaN) / 1000, digits: 2 },
  { label: "deleted while the agent was down", value: (r) => r.deletedDuringOutage, digits: 0 },
  { label: "DELETE requests per deleted pod", value: (r) => r.deletesPerPod, digits: 2 },
  { label: "pods deleted twice", value: (r) => r.deletedTwice, digits: 0 },
];

const referenceOf = (kinds: readonly ControllerKind[]): ControllerKind =>
  kinds.includes("istio") ? "istio" : "cni-repair";

export function sideBySideTable(
  runs: readonly SideRun[],
  kinds: readonly ControllerKind[],
  setup: { pods: number; isolated: number; burst: number; burstRate: number; cpuEvents: number },
): string {
  const title =
    `side by side on one node: ${setup.pods.toLocaleString("en-US")} pods on the node, node-scoped ` +
    `(${setup.isolated} isolated breaks, ${setup.burst} at ${setup.burstRate}/s, ` +
    `${setup.cpuEvents.toLocaleString("en-US")} status writes for CPU per event)`;
  return roundsTable(title, runs, kinds, referenceOf(kinds), SIDE_ROWS);
}

export function agentOutageTable(runs: readonly OutageRun[], kinds: readonly ControllerKind[], pods: number): string {
  const title = `recovery after a CNI agent outage at the defaults: ${pods} pods on the node broke while its agent was down`;
  return roundsTable(title, runs, kinds, referenceOf(kinds), OUTAGE_ROWS);
}
