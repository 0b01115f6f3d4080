// The long churn's report: memory at its start and end per controller (median and range over replicas, ratios
// per replica pair), and a chart of memory over time.
import type { ControllerKind } from "../lib/controllers.js";
import type { SoakResult, SoakSample } from "../scenarios/soak.js";
import { COLORS } from "./charts.js";
import { type Spread, spread } from "./stats.js";
import { lineChart, type Series } from "./svg.js";
import { cell, TITLES } from "./table.js";

const MB = 1024 * 1024;
const duration = (seconds: number): string => (seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} minutes`);

type SoakRow = { readonly label: string; readonly value: (start: SoakSample, end: SoakSample) => number };

const ROWS: readonly SoakRow[] = [
  { label: "heap used at start (MB)", value: (start) => start.memory.heapUsed / MB },
  { label: "heap used at end (MB)", value: (_, end) => end.memory.heapUsed / MB },
  { label: "heap growth (MB)", value: (start, end) => (end.memory.heapUsed - start.memory.heapUsed) / MB },
  { label: "RSS at start (MB)", value: (start) => start.memory.rss / MB },
  { label: "RSS at end (MB)", value: (_, end) => end.memory.rss / MB },
  { label: "RSS growth (MB)", value: (start, end) => (end.memory.rss - start.memory.rss) / MB },
];

/** First and last reading of each replica that lived through the soak. */
function ends(result: SoakResult, kind: ControllerKind): Map<number, { start: SoakSample; end: SoakSample }> {
  const byReplica = new Map<number, { start: SoakSample; end: SoakSample }>();
  for (const sample of result.samples.filter((s) => s.controller === kind)) {
    const seen = byReplica.get(sample.replica);
    byReplica.set(sample.replica, { start: seen?.start ?? sample, end: sample });
  }
  for (const [replica, { end }] of byReplica) if (end.atSeconds < result.seconds) byReplica.delete(replica);
  return byReplica;
}

export function soakTable(result: SoakResult): string {
  const { kinds } = result;
  const others = kinds.filter((kind) => kind !== "cni-repair");
  const header = ["figure", ...kinds.map((kind) => TITLES[kind]), ...others.map((kind) => `${kind} ÷ cni-repair`)];
  const per = new Map(kinds.map((kind) => [kind, ends(result, kind)]));
  const lines = [
    `#### ${duration(result.seconds)} of churn at ${result.size.toLocaleString("en-US")} pods ` +
      `(${result.replicas} × each controller at once; ${result.churnWrites.toLocaleString("en-US")} status writes, ` +
      `${result.podsReplaced} pods broken and replaced)`,
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
  ];
  for (const row of ROWS) {
    const values = (kind: ControllerKind): Map<number, number> =>
      new Map([...(per.get(kind) ?? new Map())].map(([replica, { start, end }]) => [replica, row.value(start, end)]));
    const ours = values("cni-repair");
    const ratio = (kind: ControllerKind): Spread =>
      spread([...values(kind)].map(([replica, value]) => value / (ours.get(replica) ?? Number.NaN)));
    const growth = row.label.includes("growth");
    const cells = [
      row.label,
      ...kinds.map((kind) => cell(spread([...values(kind).values()]), 1)),
      // A ratio of two growths near zero says nothing.
      ...others.map((kind) => (growth ? "" : cell(ratio(kind), 2, "×"))),
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  for (const error of result.errors) lines.push("", `- error: ${error}`);
  return lines.join("\n");
}

export function soakChart(result: SoakResult): string {
  const { kinds } = result;
  const times = [...new Set(result.samples.map((s) => s.atSeconds))].sort((a, b) => a - b);
  const line = (kind: ControllerKind, pick: (s: SoakSample) => number): [number, number][] =>
    times.map((t) => [
      t / 60,
      spread(result.samples.filter((s) => s.controller === kind && s.atSeconds === t).map((s) => pick(s) / MB)).median,
    ]);
  const series: Series[] = kinds.flatMap((kind) => [
    { name: `${kind}: RSS`, points: line(kind, (s) => s.memory.rss), color: COLORS[kind][0] as string },
    {
      name: `${kind}: heap used`,
      points: line(kind, (s) => s.memory.heapUsed),
      color: COLORS[kind][0] as string,
      dashed: true,
    },
  ]);
  return lineChart({
    title: `Memory during ${duration(result.seconds)} of churn at ${result.size.toLocaleString("en-US")} pods (medians of ${result.replicas} replicas)`,
    xLabel: "minutes",
    yLabel: "MB",
    series,
  });
}
