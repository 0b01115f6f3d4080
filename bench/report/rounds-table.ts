// A table of runs repeated over rounds: per row, each controller's median [min–max], and each other controller's
// figure as a ratio to the reference controller's, taken per round (side by side) and then summarised.
import type { ControllerKind } from "../lib/controllers.js";
import { spread } from "./stats.js";
import { cell, TITLES } from "./table.js";

export type RoundRun = { readonly round: number; readonly controller: ControllerKind };

export type RoundRow<R> = {
  readonly label: string;
  readonly value: (run: R) => number | undefined;
  readonly digits: number;
};

export function roundsTable<R extends RoundRun>(
  title: string,
  runs: readonly R[],
  kinds: readonly ControllerKind[],
  reference: ControllerKind,
  rows: readonly RoundRow<R>[],
): string {
  const others = kinds.filter((kind) => kind !== reference);
  const header = ["figure", ...kinds.map((kind) => TITLES[kind]), ...others.map((kind) => `${kind} ÷ ${reference}`)];
  const lines = [`#### ${title}`, "", `| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  const rounds = [...new Set(runs.map((run) => run.round))];
  for (const row of rows) {
    const of = (kind: ControllerKind, round?: number) =>
      runs
        .filter((run) => run.controller === kind && (round ?? run.round) === run.round)
        .map((run) => row.value(run) ?? Number.NaN);
    const ratio = (kind: ControllerKind) =>
      spread(rounds.map((round) => (of(kind, round)[0] ?? Number.NaN) / (of(reference, round)[0] ?? Number.NaN)));
    const cells = [
      row.label,
      ...kinds.map((kind) => cell(spread(of(kind)), row.digits)),
      ...others.map((kind) => cell(ratio(kind), 2, "×")),
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}
