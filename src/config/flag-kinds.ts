// The kinds of flag the table in flags.ts is built from: how each turns text into a typed value.

import type { FlagGroup, Subcommand } from "./commands.js";
import { durationExpectation, formatDuration, parseDuration } from "./duration.js";
import { isDnsLabel } from "./names.js";

export type FlagType = "string" | "int" | "duration" | "fraction" | "bool" | "list" | "enum";

/** A parsed value, or why the text is wrong, phrased to follow `invalid --flag "text": `. */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export type Flag<T> = {
  readonly type: FlagType;
  readonly default: T;
  /** The default as it would be written on the command line; parses back to `default`. */
  readonly defaultText: string;
  /** Shown after the flag name in --help: "<duration>", "<delete|label|report>"; empty for booleans. */
  readonly valueName: string;
  readonly help: string;
  /** The heading it is listed under in --help. */
  readonly group: FlagGroup;
  /** The subcommands that accept it; given to another one it is refused (see applicability.ts). */
  readonly commands: readonly Subcommand[];
  /** The accepted range, for --help: "1-64", "0s (off) or 1s-24h". */
  readonly allowed?: string;
  /** False only for --help and --version: an env var must not turn the daemon into a one-shot command. */
  readonly env: boolean;
  readonly short?: string;
  readonly parse: (text: string) => Parsed<T>;
};

export const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
export const fail = (reason: string): Parsed<never> => ({ ok: false, reason });

type Common = {
  readonly help: string;
  readonly valueName?: string;
  readonly group: FlagGroup;
  readonly commands: readonly Subcommand[];
};

/** What every kind copies from its spec unchanged. */
const described = (spec: Common) => ({ help: spec.help, group: spec.group, commands: spec.commands });

/** Free text; `parse` narrows it when the flag has a syntax (names, selectors, markers). */
export function stringFlag<T = string>(
  spec: Common & { readonly default?: string; readonly parse?: (text: string) => Parsed<T> },
): Flag<T> {
  const parse = spec.parse ?? ((text: string) => ok(text as T));
  return parsedFlag("string", spec, spec.default ?? "", "<string>", parse);
}

export function intFlag(
  spec: Common & { readonly default: number; readonly min: number; readonly max: number; readonly what?: string },
): Flag<number> {
  const expected = `expected ${spec.what ?? "an integer"} ${spec.min}-${spec.max}`;
  const parse = (text: string): Parsed<number> => {
    if (!/^\d{1,15}$/.test(text)) return fail(expected);
    const value = Number(text);
    return value >= spec.min && value <= spec.max ? ok(value) : fail(expected);
  };
  return parsedFlag("int", spec, String(spec.default), "<int>", parse, { allowed: `${spec.min}-${spec.max}` });
}

// Node clamps timers above 2^31-1 ms (~24.8 days) to 1ms, so an overlong period would fire constantly.
const maxDurationMs = 24 * 3_600_000;

export function durationFlag(
  spec: Common & {
    readonly default: string;
    /** Smallest non-zero value. */
    readonly min: number;
    /** 0 is allowed and means "off", whatever min is. */
    readonly zeroMeansOff?: boolean;
    /** The value goes to the API server in whole seconds. */
    readonly wholeSeconds?: boolean;
  },
): Flag<number> {
  const range = `${spec.zeroMeansOff === true ? "0s (off) or " : ""}${formatDuration(spec.min)}-${formatDuration(maxDurationMs)}`;
  const parse = (text: string): Parsed<number> => {
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch (error) {
      return fail(error instanceof Error ? error.message : durationExpectation);
    }
    if (ms === 0 && spec.zeroMeansOff === true) return ok(0);
    if (ms < spec.min || ms > maxDurationMs) return fail(`expected a duration ${range}`);
    if (spec.wholeSeconds === true && ms % 1000 !== 0) return fail("expected whole seconds");
    return ok(ms);
  };
  return parsedFlag("duration", spec, spec.default, "<duration>", parse, {
    allowed: spec.wholeSeconds === true ? `${range}, whole seconds` : range,
  });
}

/**
 * A share of something, greater than 0 and at most 1, in plain decimal ("0.5", ".25", "1"): "50%", "1e-1" or "+0.5"
 * are more likely a mistake than intent.
 */
export function fractionFlag(spec: Common & { readonly default: string }): Flag<number> {
  const parse = (text: string): Parsed<number> =>
    /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(text) && Number(text) > 0
      ? ok(Number(text))
      : fail("expected a fraction greater than 0 and at most 1, e.g. 0.5");
  return parsedFlag("fraction", spec, spec.default, "<0-1>", parse, { allowed: "more than 0, at most 1" });
}

const boolWords: Readonly<Record<string, boolean>> = { true: true, false: false, 1: true, 0: false };

/** Off by default; `--x` alone means true. */
export function boolFlag(
  spec: Common & { readonly default?: boolean; readonly short?: string; readonly env?: boolean },
): Flag<boolean> {
  const parse = (text: string): Parsed<boolean> => {
    const value = Object.hasOwn(boolWords, text) ? boolWords[text] : undefined;
    return value === undefined ? fail("expected true, false, 1 or 0") : ok(value);
  };
  return {
    type: "bool",
    default: spec.default ?? false,
    defaultText: String(spec.default ?? false),
    valueName: "",
    ...described(spec),
    env: spec.env ?? true,
    ...(spec.short === undefined ? {} : { short: spec.short }),
    parse,
  };
}

/** Comma-separated items, blanks around them ignored; "" is the empty list, an empty item is an error. */
export function listFlag<T = string>(
  spec: Common & { readonly default: string; readonly item?: (text: string) => Parsed<T> },
): Flag<readonly T[]> {
  const item = spec.item ?? ((text: string) => ok(text as T));
  const parse = (text: string): Parsed<readonly T[]> => {
    if (text.trim() === "") return ok([]);
    const values: T[] = [];
    for (const part of text.split(",")) {
      const trimmed = part.trim();
      if (trimmed === "") return fail("expected a comma-separated list without empty items");
      const parsed = item(trimmed);
      if (!parsed.ok) return parsed;
      values.push(parsed.value);
    }
    return ok(Object.freeze(values));
  };
  return parsedFlag("list", spec, spec.default, "<list>", parse);
}

/** Comma-separated namespace names (DNS labels); the bad one is named. */
export function namespaceListFlag(spec: Common & { readonly default: string }): Flag<readonly string[]> {
  return listFlag({
    ...spec,
    item: (text) => (isDnsLabel(text) ? ok(text) : fail(`expected namespace names, got ${JSON.stringify(text)}`)),
  });
}

export function enumFlag<const C extends readonly string[]>(
  choices: C,
  spec: Common & { readonly default: C[number]; readonly short?: string },
): Flag<C[number]> {
  const parse = (text: string): Parsed<C[number]> =>
    choices.includes(text) ? ok(text) : fail(`expected one of ${choices.join(", ")}`);
  return parsedFlag(
    "enum",
    spec,
    spec.default,
    `<${choices.join("|")}>`,
    parse,
    spec.short === undefined ? {} : { short: spec.short },
  );
}

/**
 * Every kind but bool: the default is written as text and goes through the same parser as user input, so a bad
 * default fails at import, not in production.
 */
function parsedFlag<T>(
  type: FlagType,
  spec: Common,
  defaultText: string,
  defaultValueName: string,
  parse: (text: string) => Parsed<T>,
  extra: Pick<Flag<T>, "allowed" | "short"> = {},
): Flag<T> {
  const parsed = parse(defaultText);
  if (!parsed.ok) throw new Error(`bad flag default ${JSON.stringify(defaultText)}: ${parsed.reason}`);
  return {
    type,
    default: parsed.value,
    defaultText,
    valueName: spec.valueName ?? defaultValueName,
    ...described(spec),
    ...extra,
    env: true,
    parse,
  };
}
