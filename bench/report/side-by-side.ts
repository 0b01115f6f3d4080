// The side-by-side tables (issue 27): node-scoped runs, the agent-outage recovery and the unexplained wave, each
// figure as a ratio to Istio's repair controller when it ran (else to cni-repair).
import type { ControllerKind } from "../lib/controllers.js";
import type { SideRun } from "../scenarios/side-by-side.js";
import type { WaveRun } from "../scenarios/wave.js";
import { type RoundRow, roundsTable } from "./rounds-table.js";

const MB = 1024 * 1024;

const SIDE_ROWS: readonly RoundRow<SideRun>[] = [
  { label: "start-up: spawn → DELETE of a pod broken before it started (ms)", value: (r) => r.startupMs, digits: 0 },
  { label: "spawn → synced / ready (ms)", value: (r) => r.readyMs, digits: 0 },
  { label: "CPU from spawn to synced / ready (ms, all threads)", value: (r) => r.readyCpuMs, digits: 0 },
  { label: "isolated repair latency p50 (ms)", value: (r) => r.isolated?.p50, digits: 2 },
  { label: "isolated repair latency p99 (ms)", value: (r) => r.isolated?.p99, digits: 2 },
  { label: "… of it break → DELETE received, p50 (ms)", value: (r) => r.isolatedReaction?.p50, digits: 2 },
  { label: "… of it the server's DELETE, p50 (ms)", value: (r) => r.isolatedServer?.p50, digits: 2 },
  { label: "CPU per watch event (µs)", value: (r) => r.cpuUsPerEvent, digits: 0 },
  { label: "idle CPU after sync (ms per s)", value: (r) => r.idleCpuMsPerSecond, digits: 2 },
  { label: "RSS after sync (MB)", value: (r) => (r.rssAfterSync ?? Number.NaN) / MB, digits: 1 },
  { label: "RSS after churn and repairs (MB)", value: (r) => (r.rssAfterBurst ?? Number.NaN) / MB, digits: 1 },
  { label: "burst latency p50 (ms)", value: (r) => r.burst?.p50, digits: 1 },
  { label: "burst latency p99 (ms)", value: (r) => r.burst?.p99, digits: 1 },
  { label: "DELETE requests per repaired pod", value: (r) => r.deletesPerRepairedPod, digits: 2 },
];

/** The rows of a wave repaired at the defaults; `from` names when it started (agent back, first break). */
function waveRows(from: string, outage: boolean): RoundRow<WaveRun>[] {
  const seconds = (ms: number | undefined) => (ms ?? Number.NaN) / 1000;
  return [
    { label: `${from} → last broken pod deleted (s)`, value: (r) => seconds(r.recoveryMs), digits: 2 },
    {
      label: `pods per second (${from} → last)`,
      value: (r) => (r.deleted ?? Number.NaN) / seconds(r.recoveryMs),
      digits: 2,
    },
    { label: `${from} → first DELETE (s)`, value: (r) => seconds(r.firstDeleteMs), digits: 2 },
    ...(outage
      ? [{ label: "deleted while the agent was down", value: (r: WaveRun) => r.deletedDuringOutage, digits: 0 }]
      : []),
    { label: "DELETE requests per deleted pod", value: (r) => r.deletesPerPod, digits: 2 },
    { label: "pods deleted twice", value: (r) => r.deletedTwice, digits: 0 },
    { label: "most in flight on a node (deleted, not yet gone)", value: (r) => r.maxInFlightNode, digits: 0 },
    { label: "most in flight in a namespace, all nodes", value: (r) => r.maxInFlightNamespace, digits: 0 },
    { label: "RSS of all its processes (MB)", value: (r) => (r.rssBytes ?? Number.NaN) / MB, digits: 0 },
    { label: "CPU of all its processes, break → end (s)", value: (r) => r.cpuSeconds, digits: 2 },
  ];
}

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

/** Recovery after a CNI agent outage at the defaults: every pod on `nodes` nodes broke while their agents were down. */
export function agentOutageTable(
  runs: readonly WaveRun[],
  kinds: readonly ControllerKind[],
  shape: { nodes: number; podsPerNode: number },
): string {
  const where =
    shape.nodes === 1
      ? `${shape.podsPerNode} pods on the node`
      : `${(shape.nodes * shape.podsPerNode).toLocaleString("en-US")} pods on ${shape.nodes} nodes (${shape.podsPerNode} each, one process per node)`;
  const title = `recovery after a CNI agent outage at the defaults: ${where} broke while the agents were down`;
  return roundsTable(title, runs, kinds, referenceOf(kinds), waveRows("agent back", true));
}

/** Breakage nothing explains, under the storm threshold, at the defaults. */
export function unexplainedWaveTable(
  runs: readonly WaveRun[],
  kinds: readonly ControllerKind[],
  setup: { pods: number; healthy: number },
): string {
  const title =
    `breakage nothing explains at the defaults: ${setup.pods} pods broken at once on a node with ` +
    `${setup.healthy.toLocaleString("en-US")} healthy pods, its agent Ready for an hour`;
  return roundsTable(title, runs, kinds, referenceOf(kinds), waveRows("first break", false));
}
