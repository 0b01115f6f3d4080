// Turns trial results into figures: per size, per controller, median and range over runs, and side-by-side ratios.
import type { ControllerKind } from "../lib/controllers.js";
import type { TrialResult } from "../scenarios/trial.js";
import { type Spread, spread } from "./stats.js";

const MB = 1024 * 1024;

export type Metric = {
  readonly label: string;
  readonly value: (trial: TrialResult, emptyHeap: number, emptyRss: number) => number | undefined;
  readonly digits: number;
};

export const METRICS: readonly Metric[] = [
  { label: "time to ready (s)", value: (t) => per(t.readyMs, 1000), digits: 2 },
  { label: "heap used after sync (MB)", value: (t) => per(t.afterSync?.heapUsed, MB), digits: 1 },
  { label: "RSS after sync (MB)", value: (t) => per(t.afterSync?.rss, MB), digits: 0 },
  { label: "heap bytes per cached pod", value: (t, heap0) => perPod(t, t.afterSync?.heapUsed, heap0), digits: 0 },
  { label: "RSS bytes per cached pod", value: (t, _h, rss0) => perPod(t, t.afterSync?.rss, rss0), digits: 0 },
  { label: "heap used after churn (MB)", value: (t) => per(t.afterChurn?.heapUsed, MB), digits: 1 },
  { label: "RSS after churn (MB)", value: (t) => per(t.afterChurn?.rss, MB), digits: 0 },
  { label: "CPU per watch event (µs)", value: (t) => t.cpu?.usPerEvent, digits: 0 },
  { label: "idle CPU, no events (ms per s)", value: (t) => per(t.cpu?.idleCpuPerSecond, 0.001), digits: 2 },
  { label: "repair latency p50 (ms)", value: (t) => t.latency?.p50, digits: 1 },
  { label: "repair latency p90 (ms)", value: (t) => t.latency?.p90, digits: 1 },
  { label: "repair latency p99 (ms)", value: (t) => t.latency?.p99, digits: 1 },
  { label: "repair latency max (ms)", value: (t) => t.latency?.max, digits: 1 },
  { label: "mass repair: all deleted (s)", value: (t) => per(t.mass?.allDeletedMs, 1000), digits: 2 },
  { label: "mass repair: lag after last break (s)", value: (t) => per(t.mass?.lagAfterLastBreakMs, 1000), digits: 2 },
];

function per(value: number | undefined, unit: number): number | undefined {
  return value === undefined ? undefined : value / unit;
}

function perPod(trial: TrialResult, value: number | undefined, empty: number): number | undefined {
  return value === undefined || trial.size === 0 || !Number.isFinite(empty) ? undefined : (value - empty) / trial.size;
}

export type Row = {
  readonly metric: string;
  readonly digits: number;
  /** Median and range over runs, per controller. */
  readonly byKind: Partial<Record<ControllerKind, Spread>>;
  /** Other controller ÷ cni-repair, per round (runs side by side), then median and range. */
  readonly ratioToOurs: Partial<Record<ControllerKind, Spread>>;
};

export type SizeSummary = {
  readonly size: number;
  readonly kinds: readonly ControllerKind[];
  readonly rows: readonly Row[];
};

export function summarize(trials: readonly TrialResult[], kinds: readonly ControllerKind[]): SizeSummary[] {
  const empty = (kind: ControllerKind, pick: (t: TrialResult) => number | undefined) =>
    spread(trials.filter((t) => t.size === 0 && t.controller === kind).map((t) => pick(t) ?? Number.NaN)).median;
  const reference = new Map(
    kinds.map((kind) => [
      kind,
      { heap: empty(kind, (t) => t.afterSync?.heapUsed), rss: empty(kind, (t) => t.afterSync?.rss) },
    ]),
  );
  const sizes = [...new Set(trials.map((t) => t.size))].sort((a, b) => a - b);
  return sizes.map((size) => {
    const at = trials.filter((t) => t.size === size);
    const figure = (t: TrialResult, metric: Metric) => {
      const ref = reference.get(t.controller);
      return metric.value(t, ref?.heap ?? Number.NaN, ref?.rss ?? Number.NaN) ?? Number.NaN;
    };
    const rounds = [...new Set(at.map((t) => t.round))];
    const rows = METRICS.map((metric): Row => {
      const of = (kind: ControllerKind) => at.filter((t) => t.controller === kind);
      const ratio = (kind: ControllerKind) =>
        spread(
          rounds.map((round) => {
            const ours = of("cni-repair").find((t) => t.round === round);
            const other = of(kind).find((t) => t.round === round);
            return ours && other ? figure(other, metric) / figure(ours, metric) : Number.NaN;
          }),
        );
      return {
        metric: metric.label,
        digits: metric.digits,
        byKind: Object.fromEntries(kinds.map((kind) => [kind, spread(of(kind).map((t) => figure(t, metric)))])),
        ratioToOurs: Object.fromEntries(kinds.filter((k) => k !== "cni-repair").map((kind) => [kind, ratio(kind)])),
      };
    });
    return { size, kinds, rows: rows.filter((row) => Object.values(row.byKind).some((s) => s.runs > 0)) };
  });
}
