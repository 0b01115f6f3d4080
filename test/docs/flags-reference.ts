// docs/flags.md is the real `cni-repair --help` output with a short heading, so the reference cannot drift from it.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { repositoryFile } from "../harness/binaries.js";

/** Where the generated reference lives, and the command that regenerates it. */
export const FLAGS_REFERENCE_PATH = join(dirname(repositoryFile("package.json")), "docs", "flags.md");
export const REGENERATE_COMMAND = "make docs";

/** What the built CLI prints for --help (run as its own process, exactly as a user would). */
export function cliHelp(): string {
  return execFileSync(process.execPath, [repositoryFile("dist/src/cli/main.js"), "--help"], { encoding: "utf8" });
}

export function renderFlagsReference(help: string): string {
  return [
    "# Flags",
    "",
    `<!-- Generated from \`cni-repair --help\` by \`${REGENERATE_COMMAND}\`; a unit test fails when it differs. -->`,
    "",
    "Every flag can also be set by its environment variable (shown as `env:`); a flag on the command line wins. An",
    "invalid value exits with code 2 and a message naming the flag or variable and the value. How the flags fit",
    "together: [operations.md](operations.md).",
    "",
    "```text",
    help.trimEnd(),
    "```",
    "",
  ].join("\n");
}
