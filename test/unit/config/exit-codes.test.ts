// The --custom-exit-codes parser accepts exactly comma lists of integers 1..255.

import { expect } from "chai";
import fc from "fast-check";
import { flags } from "../../../src/config/flags.js";

const parse = flags["custom-exit-codes"].parse;
const code = fc.integer({ min: 1, max: 255 });
const blanks = fc.string({ unit: fc.constantFrom(" ", "\t"), maxLength: 2 });

describe("config/custom exit codes", () => {
  it("accepts every non-empty comma list of 1..255, blanks around items allowed", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(blanks, code, blanks), { minLength: 1 }), (items) => {
        const text = items.map(([before, n, after]) => `${before}${n}${after}`).join(",");
        expect(parse(text)).to.deep.equal({ ok: true, value: items.map(([, n]) => n) });
      }),
    );
  });

  it("rejects a list with any item outside 1..255 or not an integer", () => {
    const bad = fc.oneof(
      fc.constantFrom("0", "256", "-1", "+1", "01", "1.0", "1e2", "0x1", "abc", "1 2", ""),
      fc.integer({ min: 256 }).map(String),
      fc.integer({ max: 0 }).map(String),
      fc.string().filter((s) => !/^\s*\d+\s*$/.test(s) && !s.includes(",")),
    );
    fc.assert(
      fc.property(fc.array(code), bad, fc.array(code), (before, item, after) => {
        const text = [...before, item, ...after].join(",");
        fc.pre(text.trim() !== ""); // "" alone is the empty list, checked by the rule builder
        expect(parse(text).ok).to.equal(false);
      }),
    );
  });

  it("accepts a string only if it is such a list", () => {
    const alphabet = fc.constantFrom("0", "1", "2", "5", "9", ",", " ", "-", "a");
    fc.assert(
      fc.property(fc.string({ unit: alphabet }), (text) => {
        const parsed = parse(text);
        if (!parsed.ok) return;
        // Accepted: the text is the parsed numbers joined by commas, up to blanks.
        expect(parsed.value.join(",")).to.equal(text.replace(/\s/g, ""));
        for (const n of parsed.value) expect(n >= 1 && n <= 255).to.equal(true);
      }),
    );
  });

  it("parses the empty string as the empty list", () => {
    expect(parse("")).to.deep.equal({ ok: true, value: [] });
  });
});
