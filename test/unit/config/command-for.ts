// Which subcommand a test gives a flag to: run when it accepts the flag, else the first one that does (scan -o).
// Always one: run is explicit (a bare cni-repair prints help).
import { type FlagName, flags } from "../../../src/config/flags.js";

export function commandFor(flag: string): string[] {
  const commands = flags[flag as FlagName].commands;
  return commands.includes("run") ? ["run"] : commands.slice(0, 1);
}
