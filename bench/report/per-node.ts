// The per-node table: medians [min–max] over rounds per controller, and each other controller ÷ cni-repair per round.
import type { ControllerKind } from "../lib/controllers.js";
import type { PerNodeRun } from "../scenarios/per-node.js";
import { spread } from "./stats.js";
import { cell, TITLES } from "./table.js";

const MB = 1024 * 1024;

const ROWS: readonly { label: string; value: (run: PerNodeRun) => number | undefined; digits: number }[] = [
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
  const others = kinds.filter((kind) => kind !== "cni-repair");
  const header = ["figure", ...kinds.map((kind) => TITLES[kind]), ...others.map((kind) => `${kind} ÷ cni-repair`)];
  const lines = [
    "#### per-node instance, in-cluster style (mounted token, CA, namespace; no kubeconfig)",
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
  ];
  const rounds = [...new Set(runs.map((run) => run.round))];
  for (const row of ROWS) {
    const of = (kind: ControllerKind, round?: number) =>
      runs.filter((run) => run.controller === kind && (round === undefined || run.round === round)).map(row.value);
    const ratio = (kind: ControllerKind) =>
      spread(rounds.map((round) => (of(kind, round)[0] ?? Number.NaN) / (of("cni-repair", round)[0] ?? Number.NaN)));
    const cells = [
      row.label,
      ...kinds.map((kind) => cell(spread(of(kind).map((v) => v ?? Number.NaN)), row.digits)),
      ...others.map((kind) => cell(ratio(kind), 2, "×")),
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}
