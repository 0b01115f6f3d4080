// What a failed test's controllers said, appended to the file $CNI_REPAIR_FAILURE_LOG names: CI prints it after a
// failed run, since the console's copy sits far above the summary, outside the tail a CI log shows. Kept short:
// each controller's last lines, then its warnings and errors (the likeliest clue, so printed last).
import { appendFileSync } from "node:fs";
import type { ControllerProcess } from "./controller-process.js";

const LAST_LINES = 15;
const LAST_WARNINGS = 15;

export function recordFailure(title: string, controllers: readonly ControllerProcess[]): void {
  const path = process.env.CNI_REPAIR_FAILURE_LOG;
  if (!path) return;
  const parts = [`=== failed: ${title} (${controllers.length} controller(s) started in it)`];
  for (const [index, controller] of controllers.entries()) {
    const lines = controller.stderrText;
    const warnings = lines.filter((line) => /"level":"(warn|error)"/.test(line));
    parts.push(`--- controller ${index + 1}: its last ${Math.min(LAST_LINES, lines.length)} of ${lines.length} lines`);
    parts.push(...lines.slice(-LAST_LINES));
    parts.push(
      `--- controller ${index + 1}: its last ${Math.min(LAST_WARNINGS, warnings.length)} of ${warnings.length} warnings and errors`,
    );
    parts.push(...warnings.slice(-LAST_WARNINGS));
  }
  appendFileSync(path, `${parts.join("\n")}\n`);
}
