// --help text, generated from the flag table so the docs cannot drift from the parser.

import { envVarName, flagNames, flags } from "./flags.js";

/** Usage, then one entry per flag: name, value type, default, env var and help. */
export function helpText(): string {
  const lines = [
    "Usage: cni-repair [run] [flags]     watch pods and repair broken ones until stopped",
    "       cni-repair scan [flags]      list broken pods once and what run would do (exit 0: none, 1: some)",
    "       cni-repair explain <namespace>/<pod> [flags]",
    "                                    why run would (not) repair this pod now, guard by guard (exit 1: no such pod)",
    "       cni-repair version           the version, the commit built from and the Node.js version",
    "",
    "Finds pods whose service-mesh CNI validator init container failed and repairs them.",
    "Every flag can also be set by the env var shown; a flag on the command line wins.",
    "",
    "Flags:",
  ];
  for (const name of flagNames) {
    const flag = flags[name];
    const short = flag.short === undefined ? "" : `-${flag.short}, `;
    const value = flag.valueName === "" ? "" : ` ${flag.valueName}`;
    lines.push(`  ${short}--${name}${value}   (${flag.type})`);
    lines.push(`      ${flag.help}`);
    const env = envVarName(name);
    const defaultText = flag.defaultText === "" ? '""' : flag.defaultText;
    const allowed = flag.allowed === undefined ? "" : `   allowed: ${flag.allowed}`;
    lines.push(`      default: ${defaultText}${allowed}   env: ${env ?? "none"}`);
  }
  return `${lines.join("\n")}\n`;
}
