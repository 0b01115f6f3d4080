// The per-node table: medians [min–max] over rounds per controller, and each other controller ÷ cni-repair per round.
import type { ControllerKind } from "../lib/controllers.js";
import type { PerNodeRun } from "../scenarios/per-node.js";
import { type RoundRow, roundsTable } from "./rounds-table.js";

const MB = 1024 * 1024;

const ROWS: readonly RoundRow<PerNodeRun>[] = [
  { label: "time to ready, empty node (s)", value: (r) => (r.emptyReadyMs ?? Number.NaN) / 1000, digits: 2 },
  { label: "CPU time to ready, empty node (s)", value: (r) => r.emptyReadyCpuS ?? Number.NaN, digits: 2 },
  { label: "idle RSS, empty node (MB)", value: (r) => (r.idle?.rss ?? Number.NaN) / MB, digits: 1 },
  { label: "idle heap used (MB)", value: (r) => (r.idle?.heapUsed ?? Number.NaN) / MB, digits: 1 },
  { label: "time to ready, 110 pods (s)", value: (r) => (r.fullReadyMs ?? Number.NaN) / 1000, digits: 2 },
  { label: "CPU time to ready, 110 pods (s)", value: (r) => r.fullReadyCpuS ?? Number.NaN, digits: 2 },
  { label: "RSS with 110 pods on its node (MB)", value: (r) => (r.full?.rss ?? Number.NaN) / MB, digits: 1 },
  { label: "heap used with 110 pods (MB)", value: (r) => (r.full?.heapUsed ?? Number.NaN) / MB, digits: 1 },
];

export function perNodeTable(runs: readonly PerNodeRun[], kinds: readonly ControllerKind[]): string {
  const title = "per-node instance, in-cluster style (mounted token, CA, namespace; no kubeconfig)";
  return roundsTable(title, runs, kinds, "cni-repair", ROWS);
}
