// The report's charts: repair latency CDF, memory vs pod count, and the mass-repair deletion timeline.
import type { ControllerKind } from "../lib/controllers.js";
import type { MassResult } from "../scenarios/mass-repair.js";
import type { TrialResult } from "../scenarios/trial.js";
import { spread } from "./stats.js";
import { type Chart, lineChart, type Series } from "./svg.js";

export const COLORS: Record<ControllerKind, string[]> = {
  "cni-repair": ["#1f77b4", "#2ca02c", "#17becf", "#9467bd", "#08306b"],
  candidate: ["#2ca02c", "#bcbd22", "#98df8a", "#006d2c", "#74c476"],
  baseline: ["#d62728", "#ff7f0e", "#e377c2", "#8c564b", "#7f0000"],
  istio: ["#466bb0", "#7f7f7f", "#c7c7c7", "#393b79", "#6b6ecf"],
};

function cdf(samples: readonly number[]): [number, number][] {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted.map((v, i) => [v, (i + 1) / sorted.length]);
}

export function latencyCdf(trials: readonly TrialResult[], kinds: readonly ControllerKind[]): string {
  const sizes = [...new Set(trials.filter((t) => t.latency).map((t) => t.size))].sort((a, b) => a - b);
  const series: Series[] = kinds.flatMap((kind) =>
    sizes.map((size, i) => ({
      name: `${kind}, ${size.toLocaleString("en-US")} pods`,
      points: cdf(
        trials.filter((t) => t.size === size && t.controller === kind).flatMap((t) => t.latency?.samplesMs ?? []),
      ),
      color: COLORS[kind][i % 5] as string,
      dashed: kind === "baseline",
      step: true,
    })),
  );
  const chart: Chart = {
    title: "Repair latency CDF (status write accepted → DELETE accepted, audit log), all runs pooled",
    xLabel: "latency (ms, log scale)",
    yLabel: "fraction of repairs",
    series,
    xLog: true,
  };
  return lineChart(chart);
}

export function memoryVsPods(trials: readonly TrialResult[], kinds: readonly ControllerKind[]): string {
  const sizes = [...new Set(trials.map((t) => t.size))].sort((a, b) => a - b);
  const MB = 1024 * 1024;
  const line = (kind: ControllerKind, pick: (t: TrialResult) => number | undefined) =>
    sizes.map((size): [number, number] => [
      size,
      spread(trials.filter((t) => t.size === size && t.controller === kind).map((t) => (pick(t) ?? Number.NaN) / MB))
        .median,
    ]);
  const series: Series[] = kinds.flatMap((kind) => [
    { name: `${kind}: RSS after sync`, points: line(kind, (t) => t.afterSync?.rss), color: COLORS[kind][0] as string },
    {
      name: `${kind}: heap used after sync`,
      points: line(kind, (t) => t.afterSync?.heapUsed),
      color: COLORS[kind][0] as string,
      dashed: true,
    },
  ]);
  return lineChart({ title: "Memory vs cached pods (medians)", xLabel: "pods in the cluster", yLabel: "MB", series });
}

export function massTimeline(runs: readonly { name: string; mass: MassResult }[]): string {
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"];
  const series: Series[] = runs.map((run, i) => ({
    name: run.name,
    points: [[0, 0] as [number, number], ...run.mass.timelineMs.map((ms, k): [number, number] => [ms / 1000, k + 1])],
    color: palette[i % palette.length] as string,
    step: true,
    dashed: i === 1,
  }));
  return lineChart({
    title: "Mass repair: pods deleted since the first broken-status write",
    xLabel: "seconds",
    yLabel: "pods deleted",
    series,
  });
}
