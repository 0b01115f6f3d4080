// --help text, generated from the flag table so the docs cannot drift from the parser: an overview of the
// subcommands, and per subcommand only the flags it accepts, under the headings the table gives them.

import { accepts, ENVIRONMENT_RULE } from "./applicability.js";
import { FLAG_GROUPS, SUBCOMMANDS, type Subcommand } from "./commands.js";
import { envVarName, type FlagName, type FlagTable, flagNames, flags } from "./flags.js";

type CommandHelp = {
  /** After "Usage: ". */
  readonly usage: string;
  /** One line for the overview. */
  readonly summary: string;
  /** A short paragraph at the top of the command's own help, one entry per line. */
  readonly about: readonly string[];
  readonly examples: readonly string[];
};

const COMMANDS: Readonly<Record<Subcommand, CommandHelp>> = {
  run: {
    usage: "cni-repair run [flags]",
    summary: "watch pods and repair broken ones until stopped",
    about: [
      "Watches pods and repairs those whose service-mesh CNI validator init container failed: deletes them so their",
      "owner recreates them, labels them, or only reports them, under the guards below. Runs until SIGTERM.",
    ],
    examples: [
      "cni-repair run --mode=report                             # change nothing; log and count what it would do",
      "cni-repair run --preset=istio,linkerd --namespaces=shop,blog",
      "cni-repair run --node-name=$NODE_NAME --leader-elect=false   # one per node (DaemonSet)",
    ],
  },
  scan: {
    usage: "cni-repair scan [flags]",
    summary: "list broken pods once and what run would do (exit 0: none, 1: some)",
    about: [
      "Lists the pods in scope once and prints how many it checked, in which scope, and every broken pod with what",
      "run would do with it now. With --repair, makes one pass of repairs under run's guards and prints the results.",
      "One pass: it acts on what is due now and waits for nothing; held pods are reported with their reason and wait.",
      "It deletes at most --deletion-burst (the rest: held rate_limit). It has not watched the CNI agents before: it",
      "trusts the kubelet's Ready time of an agent Ready before it started (as Kubernetes' minReadySeconds does); an",
      "agent with no Ready time or one in the future is held cni_agent_not_ready for this pass.",
      "Exit codes: 0 nothing broken (left), 1 broken pods (left), 2 error, 3 a permission --repair needs is missing.",
    ],
    examples: [
      "cni-repair scan --namespaces=shop",
      "cni-repair scan -o json | jq -r '.pods[] | select(.action == \"delete\") | .name'",
      "cni-repair scan -o yaml",
      "cni-repair scan --repair --max-deletions-per-minute=10    # one pass, e.g. from a CronJob",
    ],
  },
  explain: {
    usage: "cni-repair explain <namespace>/<pod> [flags]",
    summary: "why run would (not) repair this pod now, guard by guard (exit 1: no such pod)",
    about: [
      "Judges one pod as run would now, writing nothing: the rule it falls under (or why none), the validator's",
      "state, the verdict, every guard that would hold it and until when, and what each mode would do.",
      "Exit codes: 0 explained, 1 no such pod, 2 error.",
    ],
    examples: ["cni-repair explain shop/web-7d9f8c-x2x9q", "cni-repair explain shop/web-7d9f8c-x2x9q -o json"],
  },
  version: {
    usage: "cni-repair version",
    summary: "the version, the commit built from and the Node.js version",
    about: ["Prints the version, the commit built from and the Node.js version on one line (--version does the same)."],
    examples: ["cni-repair version", "cni-repair --version"],
  },
};

/**
 * The overview (no subcommand), or one subcommand's usage, grouped flags, environment rule and examples. `table` is
 * the flag table; tests give one built from changed presets.
 */
export function helpText(command?: Subcommand, table: FlagTable = flags): string {
  return `${(command === undefined ? overview(table) : commandHelp(command, table)).join("\n")}\n`;
}

function overview(table: FlagTable): string[] {
  const width = Math.max(...SUBCOMMANDS.map((name) => commandWord(name).length)) + 4;
  return [
    "Usage: cni-repair <command> [flags]",
    "",
    "Finds pods whose service-mesh CNI validator init container failed and repairs them.",
    "",
    "Commands:",
    ...SUBCOMMANDS.map((name) => `  ${commandWord(name).padEnd(width)}${COMMANDS[name].summary}`),
    `  ${"help [command]".padEnd(width)}this overview, or a command's flags (as <command> --help)`,
    "",
    "Flags:",
    ...flagEntries(table, ["help", "version"]),
    "",
    "Without a command, cni-repair prints this and exits 0: the controller starts only with 'run'.",
    "Run 'cni-repair help <command>' for the flags of a command.",
  ];
}

/** "explain <namespace>/<pod>": the usage line without the program name and flags. */
const commandWord = (name: Subcommand): string =>
  COMMANDS[name].usage.replace(/^cni-repair \S+/, name).replace(" [flags]", "");

function commandHelp(command: Subcommand, table: FlagTable): string[] {
  const { usage, about, examples } = COMMANDS[command];
  const lines = [`Usage: ${usage}`, "", ...about];
  for (const group of FLAG_GROUPS) {
    const names = flagNames.filter((name) => table[name].group === group && accepts(command, name));
    if (names.length > 0) lines.push("", `${group}:`, ...flagEntries(table, names));
  }
  lines.push(
    "",
    ...(command === "version"
      ? ["Environment: none is read."]
      : [
          "Environment: a flag can also be set by the env var shown; a flag and its variable given with different",
          "values are refused (exit 2), the same value in both is fine.",
          ENVIRONMENT_RULE,
        ]),
    "",
    "Examples:",
    ...examples.map((example) => `  ${example}`),
  );
  return lines;
}

/** Name, value type, help, default, allowed range and env var of each flag. */
function flagEntries(table: FlagTable, names: readonly FlagName[]): string[] {
  return names.flatMap((name) => {
    const flag = table[name];
    const short = flag.short === undefined ? "" : `-${flag.short}, `;
    const value = flag.valueName === "" ? "" : ` ${flag.valueName}`;
    const defaultText = flag.defaultText === "" ? '""' : flag.defaultText;
    const allowed = flag.allowed === undefined ? "" : `   allowed: ${flag.allowed}`;
    return [
      `  ${short}--${name}${value}   (${flag.type})`,
      `      ${flag.help}`,
      `      default: ${defaultText}${allowed}   env: ${envVarName(name) ?? "none"}`,
    ];
  });
}
