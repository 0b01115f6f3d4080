// Go-style duration parsing and formatting.

import { expect } from "chai";
import fc from "fast-check";
import { formatDuration, parseDuration } from "../../../src/config/duration.js";

describe("config/duration", () => {
  it("parses the documented forms", () => {
    expect(parseDuration("500ms")).to.equal(500);
    expect(parseDuration("10s")).to.equal(10_000);
    expect(parseDuration("5m")).to.equal(300_000);
    expect(parseDuration("1h")).to.equal(3_600_000);
    expect(parseDuration("1m30s")).to.equal(90_000);
    expect(parseDuration("0s")).to.equal(0);
    expect(parseDuration("1h2m3s4ms")).to.equal(3_723_004);
    expect(parseDuration("90s")).to.equal(90_000);
  });

  for (const bad of [
    "",
    "5",
    "0",
    "-1s",
    "+1s",
    "1x",
    "1.5s",
    "1 s",
    " 1s",
    "1s ",
    "1s1m",
    "1s1s",
    "s",
    "1us",
    "1ns",
    "1d",
    "ms",
  ]) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      expect(() => parseDuration(bad)).to.throw(RangeError, /expected a duration/);
    });
  }

  it("rejects values beyond safe integers", () => {
    expect(() => parseDuration("99999999999999999999h")).to.throw(RangeError, /too large/);
  });

  it("formats canonically", () => {
    expect(formatDuration(0)).to.equal("0s");
    expect(formatDuration(500)).to.equal("500ms");
    expect(formatDuration(90_000)).to.equal("1m30s");
    expect(formatDuration(3_600_000)).to.equal("1h");
    expect(formatDuration(3_723_004)).to.equal("1h2m3s4ms");
    expect(() => formatDuration(-1)).to.throw(RangeError);
    expect(() => formatDuration(1.5)).to.throw(RangeError);
  });

  it("round-trips ms through format and parse", () => {
    fc.assert(
      fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), (ms) => {
        expect(parseDuration(formatDuration(ms))).to.equal(ms);
      }),
    );
  });

  it("round-trips canonical text through parse and format", () => {
    const part = (unit: string, max: number) => fc.option(fc.integer({ min: 1, max }).map((n) => `${n}${unit}`));
    const canonical = fc
      .tuple(part("h", 10_000), part("m", 59), part("s", 59), part("ms", 999))
      .map((parts) => parts.filter((p) => p !== null).join(""))
      .filter((text) => text !== "");
    fc.assert(
      fc.property(canonical, (text) => {
        expect(formatDuration(parseDuration(text))).to.equal(text);
      }),
    );
  });

  it("never returns anything but a safe non-negative integer, or throws RangeError", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("0", "1", "9", "h", "m", "s", "-", ".", " ", "x") }), (text) => {
        try {
          const ms = parseDuration(text);
          expect(Number.isSafeInteger(ms) && ms >= 0).to.equal(true);
        } catch (error) {
          expect(error).to.be.instanceOf(RangeError);
        }
      }),
    );
  });
});
