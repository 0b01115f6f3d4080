// argv to the command and the raw text of each flag given; values are checked later, against the table.

import { parseArgs } from "node:util";
import { accepts, refuseFlag } from "./applicability.js";
import { isSubcommand, SUBCOMMANDS, type Subcommand } from "./commands.js";
import { ConfigError, invalidValue } from "./config-error.js";
import { didYouMean } from "./did-you-mean.js";
import { type FlagName, flagNames, flags, isFlagName } from "./flags.js";

export type Command = Subcommand | "help";

/** The text a flag was given, and where from ("--mode" or "CNI_REPAIR_MODE"), for error messages. */
export type Setting = { readonly text: string; readonly source: string };

export type Args = {
  readonly command: Command;
  /** With --help: the subcommand whose help is asked for; undefined for the overview. */
  readonly helpFor?: Subcommand;
  readonly settings: ReadonlyMap<FlagName, Setting>;
  /** explain's <namespace>/<pod>. */
  readonly target?: { readonly namespace: string; readonly name: string };
};

const parseOptions = Object.fromEntries(
  Object.entries(flags).map(([name, flag]) => [
    name,
    {
      type: flag.type === "bool" ? ("boolean" as const) : ("string" as const),
      ...(flag.short === undefined ? {} : { short: flag.short }),
    },
  ]),
);

/** Reads argv; throws ConfigError for unknown flags, missing values and stray arguments. */
export function readArgs(argv: readonly string[]): Args {
  // Non-strict so we can accept `--bool=false` and word our own errors; we check every token ourselves.
  const { tokens } = parseArgs({
    args: [...argv],
    options: parseOptions,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const settings = new Map<FlagName, Setting>();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const { name, rawName } = token;
    if (!isFlagName(name)) {
      const hint = rawName.startsWith("--") ? didYouMean(name, flagNames, (flag) => `--${flag}`) : "";
      throw new ConfigError(`unknown flag ${rawName}${hint} (see --help)`);
    }
    const source = `--${name}`;
    if (flags[name].type === "bool") {
      settings.set(name, { text: token.value ?? "true", source });
      continue;
    }
    if (token.value === undefined) throw new ConfigError(`flag ${source} needs a value`);
    // "--kubeconfig --help" would otherwise swallow the next flag; "-1s" still reaches the value check.
    if (!token.inlineValue && /^-[^\d]/.test(token.value)) {
      throw new ConfigError(
        `flag ${source} needs a value, got flag ${token.value} (write ${source}=${token.value} to mean it)`,
      );
    }
    settings.set(name, { text: token.value, source });
  }
  const [first, ...rest] = positionals;
  if (first === "help") return helpCommand(rest, settings);
  if (first !== undefined && !isSubcommand(first)) throw unknownCommand(first);
  const help = isSet(settings, "help");
  const version = isSet(settings, "version");
  // run is explicit: a bare `cni-repair` prints the overview and changes nothing, as kubectl and helm do.
  if (first === undefined && !help && !version) {
    if (settings.size === 0) return { command: "help", settings };
    throw new ConfigError(
      `no command given (flags: ${[...settings.values()].map((setting) => setting.source).join(" ")}); ` +
        "run is not implied: write 'cni-repair run [flags]' to start the controller",
    );
  }
  // explain's pod may be left out when only its help is asked for.
  const target = first === "explain" && !(help && rest.length === 0) ? explainTarget(rest) : undefined;
  if (first !== "explain" && rest.length > 0) {
    throw new ConfigError(`unexpected arguments after ${first}: ${rest.map((arg) => JSON.stringify(arg)).join(" ")}`);
  }
  // --version is the version subcommand; no subcommand is run.
  const subcommand = version ? "version" : (first ?? "run");
  for (const name of settings.keys()) if (!accepts(subcommand, name)) throw refuseFlag(subcommand, name);
  if (help) return { command: "help", ...(first !== undefined && { helpFor: first }), settings };
  return { command: subcommand, settings, ...(target && { target }) };
}

/** `cni-repair help [command]`: the overview, or one command's help (as `<command> --help`). */
function helpCommand(rest: readonly string[], settings: ReadonlyMap<FlagName, Setting>): Args {
  const [topic, ...more] = rest;
  if (more.length > 0) {
    throw new ConfigError(
      `unexpected arguments after help ${topic}: ${more.map((arg) => JSON.stringify(arg)).join(" ")}`,
    );
  }
  if (topic !== undefined && !isSubcommand(topic)) throw unknownCommand(topic);
  return { command: "help", ...(topic !== undefined && { helpFor: topic }), settings };
}

function unknownCommand(word: string): ConfigError {
  const hint = didYouMean(word, [...SUBCOMMANDS, "help"]);
  return new ConfigError(
    `unknown command ${JSON.stringify(word)}${hint}: expected ${SUBCOMMANDS.join(", ")}, help, --help or --version`,
  );
}

/** explain takes exactly one <namespace>/<pod>. */
function explainTarget(positionals: readonly string[]): { namespace: string; name: string } {
  const [given, ...rest] = positionals;
  if (given === undefined) throw new ConfigError("explain needs a pod: cni-repair explain <namespace>/<pod>");
  if (rest.length > 0) {
    throw new ConfigError(
      `unexpected arguments after explain ${given}: ${rest.map((arg) => JSON.stringify(arg)).join(" ")}`,
    );
  }
  const [namespace, name, ...more] = given.split("/");
  if (!namespace || !name || more.length > 0) {
    throw new ConfigError(`explain: ${JSON.stringify(given)} is not <namespace>/<pod>`);
  }
  return { namespace, name };
}

function isSet(settings: ReadonlyMap<FlagName, Setting>, name: "help" | "version"): boolean {
  const setting = settings.get(name);
  if (setting === undefined) return false;
  const parsed = flags[name].parse(setting.text);
  if (!parsed.ok) throw invalidValue(setting.source, setting.text, parsed.reason);
  return parsed.value;
}
