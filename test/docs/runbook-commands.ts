// The commands docs/runbooks.md gives for finding the acting pod, as written there, so that tests run what an
// operator would type rather than a copy of it.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { repositoryFile } from "../harness/binaries.js";

/** The one line of docs/runbooks.md that matches, as written; throws unless exactly one does. */
export function runbookLine(pattern: RegExp): string {
  const lines = readFileSync(repositoryFile("docs/runbooks.md"), "utf8")
    .split("\n")
    .filter((line) => pattern.test(line));
  if (lines.length !== 1) throw new Error(`docs/runbooks.md has ${lines.length} lines matching ${pattern}, not one`);
  return lines[0] ?? "";
}

/** The pod the runbooks' expansion (`pod=${holder…}`) finds in a Lease's holderIdentity, run by bash as written. */
export function documentedLeaderPod(holder: string): string {
  const expansion = runbookLine(/^pod=\$\{holder/).trim();
  return execFileSync("bash", ["--noprofile", "--norc", "-c", `${expansion}; printf %s "$pod"`], {
    env: { holder },
    encoding: "utf8",
  });
}
