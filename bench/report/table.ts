// Markdown tables of the summary: one per population size, medians with [min–max] over runs and the ratios.
import type { ControllerKind } from "../lib/controllers.js";
import type { Spread } from "./stats.js";
import type { SizeSummary } from "./summary.js";

export type FloorRun = {
  readonly size: number;
  readonly round: number;
  readonly totalMs: number;
  readonly listMs: number;
};

export const TITLES: Record<ControllerKind, string> = {
  "cni-repair": "cni-repair",
  candidate: "candidate",
  baseline: "baseline (client-node informer)",
  istio: "Istio (cni/pkg/repair)",
};

const fmt = (value: number, digits: number): string =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "–";

export function cell(s: Spread | undefined, digits: number, suffix = ""): string {
  if (!s || s.runs === 0) return "–";
  if (s.runs === 1) return `${fmt(s.median, digits)}${suffix}`;
  return `${fmt(s.median, digits)}${suffix} [${fmt(s.min, digits)}–${fmt(s.max, digits)}]`;
}

export function sizeTable(summary: SizeSummary, floor: Spread | undefined): string {
  const others = summary.kinds.filter((kind) => kind !== "cni-repair");
  const header = [
    "figure",
    ...summary.kinds.map((kind) => TITLES[kind]),
    ...others.map((kind) => `${kind} ÷ cni-repair`),
  ];
  const lines = [
    `#### ${summary.size.toLocaleString("en-US")} pods`,
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
  ];
  for (const row of summary.rows) {
    const cells = [
      row.metric,
      ...summary.kinds.map((kind) => cell(row.byKind[kind], row.digits)),
      ...others.map((kind) => cell(row.ratioToOurs[kind], 2, "×")),
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  if (floor && floor.runs > 0) {
    const blanks = header.slice(2).map(() => "");
    lines.push(`| floor: bare paginated LIST, spawn to done (s) | ${cell(floor, 2)} | ${blanks.join(" | ")} |`);
  }
  return lines.join("\n");
}
