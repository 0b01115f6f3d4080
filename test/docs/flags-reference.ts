// docs/flags.md is the real `cni-repair --help` output of the overview and of every subcommand, with short
// headings, so the reference cannot drift from it.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { ENVIRONMENT_RULE } from "../../src/config/applicability.js";
import { SUBCOMMANDS } from "../../src/config/commands.js";
import { type FlagTable, flags } from "../../src/config/flags.js";
import { helpText } from "../../src/config/help.js";
import { repositoryFile } from "../harness/binaries.js";

/** Where the generated reference lives, and the command that regenerates it. */
export const FLAGS_REFERENCE_PATH = join(dirname(repositoryFile("package.json")), "docs", "flags.md");
export const REGENERATE_COMMAND = "make docs";

/** One section per help screen: the command line that prints it and what it printed. */
export type HelpScreen = { readonly args: readonly string[]; readonly text: string };

/** What the built CLI prints for --help and for each subcommand's --help (run as a user would). */
export function cliHelp(): HelpScreen[] {
  return [[], ...SUBCOMMANDS.map((name) => [name])].map((words) => {
    const args = [...words, "--help"];
    const text = execFileSync(process.execPath, [repositoryFile("dist/src/cli/main.js"), ...args], {
      encoding: "utf8",
    });
    return { args, text };
  });
}

/**
 * The same screens rendered in this process from a flag table (by default the real one): what the CLI prints, so a
 * test can render the reference a changed preset would give.
 */
export function helpScreens(table: FlagTable = flags): HelpScreen[] {
  return [undefined, ...SUBCOMMANDS].map((command) => ({
    args: [...(command === undefined ? [] : [command]), "--help"],
    text: helpText(command, table),
  }));
}

export function renderFlagsReference(screens: readonly HelpScreen[]): string {
  return [
    "# Flags",
    "",
    `<!-- Generated from \`cni-repair --help\` and \`cni-repair <command> --help\` by \`${REGENERATE_COMMAND}\`; a unit test fails when it differs. -->`,
    "",
    "Every flag can also be set by its environment variable (shown as `env:`); a flag and its variable given with",
    "different values are refused (exit 2), the same value in both is fine. An",
    "invalid value exits with code 2 and a message naming the flag or variable and the value. A flag given to a",
    "command that does not accept it exits 2 too, naming the commands that do. For variables: " +
      `${ENVIRONMENT_RULE} How the flags fit together: [operations.md](operations.md).`,
    ...screens.flatMap(({ args, text }) => [
      "",
      `## \`cni-repair ${args.join(" ")}\``,
      "",
      "```text",
      text.trimEnd(),
      "```",
    ]),
    "",
  ].join("\n");
}
