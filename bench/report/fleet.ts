// The fleet rollout's table (issue 35): N instances of each controller started at once, one per node, each figure
// as a ratio to Istio's repair controller when it ran (else to cni-repair).
import type { ControllerKind } from "../lib/controllers.js";
import type { FleetRun } from "../scenarios/fleet-rollout.js";
import { type RoundRow, roundsTable } from "./rounds-table.js";

const MB = 1024 * 1024;
const mb = (bytes: number | undefined) => (bytes ?? Number.NaN) / MB;

const total = (counts: Readonly<Record<string, number>> | undefined) =>
  counts === undefined ? Number.NaN : Object.values(counts).reduce((sum, n) => sum + n, 0);

const FLEET_ROWS: readonly RoundRow<FleetRun>[] = [
  { label: "first spawn → every instance synced (s)", value: (r) => (r.allSyncedMs ?? Number.NaN) / 1000, digits: 2 },
  { label: "one instance's spawn → synced, median (s)", value: (r) => (r.syncedP50Ms ?? Number.NaN) / 1000, digits: 2 },
  { label: "API server CPU during the rollout (s, /proc)", value: (r) => r.apiRolloutCpuS, digits: 2 },
  { label: "API server CPU during the rollout (s, its /metrics)", value: (r) => r.apiRolloutMetricsCpuS, digits: 2 },
  {
    label: "… less its CPU at rest over as long (s, /proc)",
    value: (r) => r.apiRolloutNetCpuS,
    digits: 2,
  },
  {
    label: "requests the rollout sent it (apiserver_request_total)",
    value: (r) => total(r.rolloutRequests),
    digits: 0,
  },
  { label: "API server RSS, peak during the rollout (MB, /proc)", value: (r) => mb(r.apiRssPeakBytes), digits: 0 },
  { label: "… its RSS before the rollout (MB)", value: (r) => mb(r.apiRssBeforeBytes), digits: 0 },
  { label: "API server CPU at rest, before the rollout (ms per s)", value: (r) => r.apiIdleBeforeCpuMsPerS, digits: 1 },
  { label: "API server CPU at rest, the instances watching (ms per s)", value: (r) => r.apiRestCpuMsPerS, digits: 1 },
  {
    label: "API server RSS at rest, the instances watching (MB, /proc)",
    value: (r) => mb(r.apiRestRssBytes),
    digits: 0,
  },
  {
    label: "… its Go heap in use at rest (MB, its /metrics)",
    value: (r) => mb(r.apiRestMetrics?.heapInuseBytes),
    digits: 0,
  },
  { label: "watches the instances hold open (its /metrics)", value: (r) => r.watchesOpened, digits: 0 },
  { label: "instances' CPU, spawn → the last synced, all N (s)", value: (r) => r.instancesCpuToSyncedS, digits: 2 },
  { label: "instances' CPU at rest, all N (ms per s)", value: (r) => r.instancesRestCpuMsPerS, digits: 2 },
  { label: "instances' RSS at rest, all N (MB)", value: (r) => mb(r.instancesRssBytes), digits: 0 },
];

export function fleetTable(
  runs: readonly FleetRun[],
  kinds: readonly ControllerKind[],
  setup: { nodes: number; podsPerNode: number },
): string {
  const title =
    `a DaemonSet rollout: ${setup.nodes} per-node instances started at once, ${setup.podsPerNode} pods on each node ` +
    `(${(setup.nodes * setup.podsPerNode).toLocaleString("en-US")} pods), one API server`;
  return roundsTable(title, runs, kinds, kinds.includes("istio") ? "istio" : "cni-repair", FLEET_ROWS);
}
