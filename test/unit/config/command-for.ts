// Which subcommand a test gives a flag to: run when it accepts the flag, else the first one that does (scan -o).
import { type FlagName, flags } from "../../../src/config/flags.js";

export function commandFor(flag: string): string[] {
  const commands = flags[flag as FlagName].commands;
  return commands.includes("run") ? [] : commands.slice(0, 1);
}
