// The subcommands of cni-repair, and the headings the flags are grouped under in each one's --help.

export const SUBCOMMANDS = ["run", "scan", "explain", "version"] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

export function isSubcommand(word: string): word is Subcommand {
  return (SUBCOMMANDS as readonly string[]).includes(word);
}

/** In --help order. */
export const FLAG_GROUPS = [
  "Connection",
  "Detection",
  "Actions",
  "Guards",
  "Startup taints",
  "Controller",
  "Leader election",
  "Observability",
  "Output",
  "General",
] as const;
export type FlagGroup = (typeof FLAG_GROUPS)[number];
