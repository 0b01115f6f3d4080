// Property tests: every flag's parser accepts exactly the value space its --help documents (the "allowed" range,
// the <a|b|c> choices, the boolean words), and a value means the same whether it comes from argv or from env.

import { expect } from "chai";
import fc from "fast-check";
import { parseConfig } from "../../../src/config/config.js";
import { formatDuration, parseDuration } from "../../../src/config/duration.js";
import type { Flag } from "../../../src/config/flag-kinds.js";
import { envVarName, type FlagName, flagNames, flags } from "../../../src/config/flags.js";

const table = flags as unknown as Record<FlagName, Flag<unknown>>;
const ofType = (type: Flag<unknown>["type"]) => flagNames.filter((name) => table[name].type === type);

/** "1-64" → [1, 64], as --help shows it. */
function intRange(flag: Flag<unknown>): [number, number] {
  const match = /^(\d+)-(\d+)$/.exec(flag.allowed ?? "");
  if (!match) throw new Error(`int flag without a documented range: ${flag.allowed}`);
  return [Number(match[1]), Number(match[2])];
}

/** "0s (off) or 1s-24h, whole seconds" → its parts, as --help shows them. */
function durationRange(flag: Flag<unknown>) {
  const match = /^(0s \(off\) or )?(\w+)-(\w+)(, whole seconds)?$/.exec(flag.allowed ?? "");
  if (!match) throw new Error(`duration flag without a documented range: ${flag.allowed}`);
  return {
    zeroMeansOff: match[1] !== undefined,
    min: parseDuration(match[2] ?? ""),
    max: parseDuration(match[3] ?? ""),
    wholeSeconds: match[4] !== undefined,
  };
}

/** Text a user might type for a number: digits, signs, blanks, dots, exponents, hex. */
const numberish = fc.oneof(
  fc.nat({ max: 2_000_000 }).map(String),
  fc.integer({ min: -1_000, max: 1_000 }).map(String),
  fc.string({ unit: fc.constantFrom("0", "1", "6", "9", "+", "-", " ", ".", "e", "x"), maxLength: 8 }),
);

describe("config/flag value spaces (properties)", () => {
  it("documents a range for every int and duration flag", () => {
    for (const name of ofType("int")) intRange(table[name]);
    for (const name of ofType("duration")) durationRange(table[name]);
  });

  for (const name of ofType("int")) {
    const flag = table[name];
    it(`--${name} accepts exactly the integers ${flag.allowed}`, () => {
      const [min, max] = intRange(flag);
      fc.assert(
        fc.property(numberish, (text) => {
          const parsed = flag.parse(text);
          const documented = /^\d{1,15}$/.test(text) && Number(text) >= min && Number(text) <= max;
          expect(parsed.ok, text).to.equal(documented);
          if (parsed.ok) expect(parsed.value).to.equal(Number(text));
        }),
        { numRuns: 300 },
      );
      // The ends of the range, and one past each.
      expect(flag.parse(String(min)).ok).to.equal(true);
      expect(flag.parse(String(max)).ok).to.equal(true);
      if (min > 0) expect(flag.parse(String(min - 1)).ok).to.equal(false);
      expect(flag.parse(String(max + 1)).ok).to.equal(false);
    });
  }

  for (const name of ofType("duration")) {
    const flag = table[name];
    it(`--${name} accepts exactly the durations ${flag.allowed}`, () => {
      const range = durationRange(flag);
      const interesting = fc.oneof(
        fc.nat({ max: 30 * 3_600_000 }),
        fc.constantFrom(0, 1, range.min - 1, range.min, range.max, range.max + 1).filter((ms) => ms >= 0),
        fc.nat({ max: 30 * 3_600 }).map((s) => s * 1000),
      );
      fc.assert(
        fc.property(interesting, (ms) => {
          const parsed = flag.parse(formatDuration(ms));
          const documented =
            (ms === 0 && range.zeroMeansOff) ||
            (ms >= range.min && ms <= range.max && (!range.wholeSeconds || ms % 1000 === 0));
          expect(parsed.ok, formatDuration(ms)).to.equal(documented);
          if (parsed.ok) expect(parsed.value).to.equal(ms);
        }),
        { numRuns: 300 },
      );
    });
  }

  for (const name of ofType("enum")) {
    const flag = table[name];
    it(`--${name} accepts exactly ${flag.valueName}`, () => {
      const choices = flag.valueName.replace(/^<|>$/g, "").split("|");
      const near = fc.oneof(
        fc.constantFrom(...choices),
        fc.constantFrom(...choices).map((c) => c.toUpperCase()),
        fc.constantFrom(...choices).map((c) => ` ${c}`),
        fc.string({ maxLength: 8 }),
      );
      fc.assert(
        fc.property(near, (text) => {
          expect(flag.parse(text)).to.deep.equal(
            choices.includes(text)
              ? { ok: true, value: text }
              : { ok: false, reason: `expected one of ${choices.join(", ")}` },
          );
        }),
        { numRuns: 200 },
      );
    });
  }

  it("every boolean flag accepts exactly true, false, 1 and 0", () => {
    const words: Record<string, boolean> = { true: true, false: false, 1: true, 0: false };
    const near = fc.oneof(
      fc.constantFrom("true", "false", "1", "0", "TRUE", "True", "yes", "no", "on", "off", "", " true", "01"),
      fc.string({ maxLength: 6 }),
    );
    for (const name of ofType("bool")) {
      fc.assert(
        fc.property(near, (text) => {
          const parsed = table[name].parse(text);
          expect(parsed.ok, `--${name}=${JSON.stringify(text)}`).to.equal(Object.hasOwn(words, text));
          if (parsed.ok) expect(parsed.value).to.equal(words[text]);
        }),
        { numRuns: 100 },
      );
    }
  });

  it("has the fraction flags", () => {
    expect(ofType("fraction")).to.include.members(["max-broken-fraction", "startup-taint-max-share"]);
  });

  for (const name of ofType("fraction")) {
    it(`--${name} accepts exactly the decimals greater than 0 and at most 1`, () => {
      const flag = table[name];
      const decimal = fc
        .tuple(
          fc.constantFrom("", "0", "1", "2", "10"),
          fc.option(fc.string({ unit: fc.constantFrom("0", "1", "5", "9"), minLength: 1, maxLength: 4 })),
        )
        .map(([whole, fraction]) => (fraction === null ? whole : `${whole}.${fraction}`))
        .filter((text) => text !== "");
      fc.assert(
        fc.property(decimal, (text) => {
          const parsed = flag.parse(text);
          const value = Number(text);
          expect(parsed.ok, text).to.equal(value > 0 && value <= 1);
          if (parsed.ok) expect(parsed.value).to.equal(value);
        }),
        { numRuns: 500 },
      );
      for (const bad of ["1e-1", "-0.5", "+0.5", "0.5 ", "NaN", "Infinity", "1.", "0x1"]) {
        expect(flag.parse(bad).ok, bad).to.equal(false);
      }
    });
  }

  it("a value means the same from argv and from the environment: the same config, or an error either way", () => {
    const withEnv = flagNames.filter((name) => envVarName(name) !== undefined);
    const valueFor = (name: FlagName) => {
      const flag = table[name];
      switch (flag.type) {
        case "int": {
          const [min, max] = intRange(flag);
          return fc.oneof(
            fc.integer({ min: Math.max(0, min - 2), max: Math.min(max + 2, min + 1000) }).map(String),
            numberish,
          );
        }
        case "duration":
          return fc.oneof(fc.nat({ max: 25 * 3_600_000 }).map(formatDuration), fc.string({ maxLength: 5 }));
        case "bool":
          return fc.constantFrom("true", "false", "1", "0", "yes");
        case "enum":
          return fc.oneof(
            fc.constantFrom(...flag.valueName.replace(/^<|>$/g, "").split("|")),
            fc.string({ maxLength: 5 }),
          );
        default:
          return fc.oneof(fc.constant(flag.defaultText), fc.string({ maxLength: 12 }));
      }
    };
    const entry = fc.constantFrom(...withEnv).chain((name) => valueFor(name).map((text) => [name, text] as const));
    const outcome = (run: () => unknown) => {
      try {
        return { ok: true, value: run() };
      } catch (error) {
        return { ok: false, error: (error as Error).name };
      }
    };
    fc.assert(
      fc.property(entry, ([name, text]) => {
        const fromArgv = outcome(() => parseConfig(["run", `--${name}=${text}`], {}));
        const fromEnv = outcome(() => parseConfig(["run"], { [envVarName(name) ?? ""]: text }));
        expect(fromEnv, `--${name}=${JSON.stringify(text)}`).to.deep.equal(fromArgv);
      }),
      { numRuns: 500 },
    );
  });
});
