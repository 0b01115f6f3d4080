// Which flags and CNI_REPAIR_* variables a subcommand takes. The flag table declares who accepts each flag; this
// file holds the one rule for a flag or variable given to a subcommand that does not accept it.
import type { Subcommand } from "./commands.js";
import { ConfigError } from "./config-error.js";
import { type FlagName, flags } from "./flags.js";

export function accepts(command: Subcommand, name: FlagName): boolean {
  return flags[name].commands.includes(command);
}

/** On the command line such a flag is refused: ignoring it would leave the user believing it took effect. */
export function refuseFlag(command: Subcommand, name: FlagName): ConfigError {
  return new ConfigError(`flag --${name} does not apply to ${command} (accepted by: ${acceptedBy(name)})`);
}

/**
 * From the environment: `run` refuses the variable of a flag it does not accept, as it refuses the flag, because
 * its environment is its configuration (a Deployment setting CNI_REPAIR_OUTPUT or CNI_REPAIR_REPAIR expects
 * something run never does). scan and explain ignore such variables: they are run by hand, often in a shell that
 * holds the Deployment's environment (CNI_REPAIR_HTTP_PORT, the leader election's), which means nothing to a
 * one-shot command, while the shared settings in it (connection, detection, actions, guards, logs) apply alike.
 */
export function environmentUse(command: Subcommand, name: FlagName): "use" | "ignore" | "refuse" {
  if (accepts(command, name)) return "use";
  return command === "run" ? "refuse" : "ignore";
}

export function refuseVariable(command: Subcommand, name: FlagName, envName: string): ConfigError {
  return new ConfigError(
    `environment variable ${envName} does not apply to ${command} (its flag --${name} is accepted by: ${acceptedBy(name)}); unset it for ${command}`,
  );
}

/** The rule above in a sentence, for --help and the docs. */
export const ENVIRONMENT_RULE =
  "run refuses a CNI_REPAIR_* variable of a flag it does not accept; scan and explain ignore such variables, so a shell holding the Deployment's environment can still scan and explain.";

const acceptedBy = (name: FlagName): string => flags[name].commands.join(", ");
